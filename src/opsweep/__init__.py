"""opsweep: measure what PyTorch's dynamo ONNX exporter supports, operator by operator."""

__version__ = "0.1.0"
