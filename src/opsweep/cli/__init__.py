from opsweep.cli.main import main

__all__ = ["main"]
