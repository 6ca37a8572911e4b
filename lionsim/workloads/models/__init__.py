"""The networks the workloads train: an MLP, a ViT and a char-level GPT."""
