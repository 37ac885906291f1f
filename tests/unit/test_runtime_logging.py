"""onnxruntime's own log lines stay off the terminal, and where they come from.

A run that fails inside a kernel makes onnxruntime log
`[E:onnxruntime:, sequential_executor.cc ...] Non-zero status code ...` to the
process's stderr before it raises. The line comes from the run's logger, whose
severity is the session's `log_severity_level` (RunOptions do not set one);
the process-wide default logger does not reach it.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper
from onnxruntime.capi.onnxruntime_pybind11_state import Fail

from opsweep.engine.runner import ORT_ERRORS, make_session, quiet_runtime, run_session

LOG_LINE = "[E:onnxruntime:"


def dropout_with_a_bad_ratio() -> onnx.ModelProto:
    """A model that loads and raises when run: Dropout's ratio must be in [0, 1)."""
    x = helper.make_tensor_value_info("inputs_0", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    ratio = helper.make_tensor("ratio", TensorProto.FLOAT, [], [1.5])
    training = helper.make_tensor("training", TensorProto.BOOL, [], [True])
    node = helper.make_node("Dropout", ["inputs_0", "ratio", "training"], ["y"])
    graph = helper.make_graph([node], "g", [x], [y], [ratio, training])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


@pytest.fixture(autouse=True)
def quiet_again():
    yield
    quiet_runtime()


def failed_run(capfd) -> tuple[str, str]:
    """(what the exception said, what reached file descriptor 2)."""
    capfd.readouterr()
    session = make_session(dropout_with_a_bad_ratio())
    with pytest.raises(Fail) as raised:
        run_session(session, [torch.ones(3)])
    return str(raised.value), capfd.readouterr().err


def test_a_failed_run_logs_nothing_and_still_says_why(capfd):
    quiet_runtime()
    message, err = failed_run(capfd)
    assert "Non-zero status code returned while running Dropout node" in message
    assert "ratio must be in the range [0, 1)" in message
    assert LOG_LINE not in err and err == ""


def test_verbose_lets_onnxruntime_errors_through(capfd):
    quiet_runtime(verbose=True)
    _, err = failed_run(capfd)
    assert LOG_LINE in err and "sequential_executor" in err


def test_the_line_comes_from_the_session_severity_not_the_default_logger(capfd):
    quiet_runtime()
    ort.set_default_logger_severity(4)  # the process-wide default logger: silenced
    options = ort.SessionOptions()
    options.log_severity_level = ORT_ERRORS  # ... but the session (and so its runs) logs errors
    session = ort.InferenceSession(dropout_with_a_bad_ratio().SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    capfd.readouterr()
    with pytest.raises(Fail):
        session.run(None, {"inputs_0": np.ones(3, np.float32)})
    assert "sequential_executor" in capfd.readouterr().err
    quiet = ort.RunOptions()
    quiet.log_severity_level = 4  # a run's own severity would also silence it
    with pytest.raises(Fail):
        session.run(None, {"inputs_0": np.ones(3, np.float32)}, quiet)
    assert LOG_LINE not in capfd.readouterr().err


def test_quiet_exporter_silences_the_loggers_older_torch_logs_captures_to():
    """torch 2.11/2.12 log a guard traceback at ERROR from torch._guards for a failing
    capture (seen in their full sweeps); quiet mode keeps it off the terminal."""
    import logging

    from opsweep.engine.adapter import quiet_exporter
    logger = logging.getLogger("torch._guards")
    before = logger.level
    try:
        logger.setLevel(logging.NOTSET)
        quiet_exporter()
        assert not logger.isEnabledFor(logging.ERROR)
    finally:
        logger.setLevel(before)
