"""The adopter's own library (unrelated to opsweep). Like many packages it reads its version
from its installed metadata: importing it needs the project installed, not only checked out."""

from importlib.metadata import version

__version__ = version("demo-lib")
