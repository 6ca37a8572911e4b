"""Data sources: generated (clusters, shapes, corpus) and read from local files (CIFAR-10, text)."""
