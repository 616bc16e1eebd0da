"""Context variants: the situating text written for each chunk before it is indexed."""
