"""Dataset loaders: each turns files on disk into a ``Corpus`` whose gold is character spans."""
