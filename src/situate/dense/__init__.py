"""Dense vector indexes over chunk embeddings."""
