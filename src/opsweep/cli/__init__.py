from opsweep.cli.main import main, run

__all__ = ["main", "run"]
