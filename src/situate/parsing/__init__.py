"""Document parsing: files (PDF, HTML, DOCX, Markdown, text) become text whose offsets are the document's."""
