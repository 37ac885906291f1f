"""The two operators this project's models use."""

from opsweep.catalog.families import FLOAT, unary

SPECS = [
    unary("sin", dtypes=FLOAT),
    unary("cos", dtypes=FLOAT),
]
