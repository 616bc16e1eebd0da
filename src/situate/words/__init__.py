"""Word lists every layer may use: the stop words of each language (:mod:`.stopwords`)."""
