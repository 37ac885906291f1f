"""A faster route to the same export: what ``torch.onnx.export(dynamo=True)``
recomputes on every call, computed once per process.

Of a one-op export through the public call, set-up that does not depend on the model
dominates (docs/performance.md has the measurements):

1. building the onnxscript registry (``ONNXRegistry.from_torchlib``);
2. building the ONNX-friendly decomposition table from it and splitting it
   into CompositeImplicitAutograd overrides and python decompositions
   (which walks every CIA op of the dispatcher);
3. the context that overrides CompositeImplicitAutograd kernels for the
   decomposition: it registers ~25 python kernels on each of some 230 ops
   through ``OperatorBase.py_impl`` (whose nested ``Callable[...]``
   annotations are evaluated on every call) and builds a fresh
   ``autograd_not_implemented`` closure for each.

This module keeps (1) and (2) per process (the registration of (1) is shared by the
registries of every opset: :func:`opsweep.catalog.registry.torchlib_registry`) and
makes (3) cheap: annotations in ``torch._ops`` become free, and -- only when torch's
context manager is the exact source this replica was written against -- the same
registrations are made directly in each op's kernel table, with one closure per op.
Then it calls the same ``_core.export`` the public call reaches, with the same opset
and arguments. Every piece is an internal of torch: when any is missing, the fast
path is unavailable and the sweep uses the public call, and the fingerprint's
exporter path says which ran. ``tests/integration/test_fastpath.py`` proves the
two give the same outcome on specs reaching every stage.

Two shortcuts cut the per-export cost of the decomposition, torch's second trace of
every captured program (measured on torch 2.15: capture ~46% of an export, the
re-trace ~35%): a program that must decompose to itself skips it
(:func:`decomposes_to_itself`); and a module whose last export of its kind was
re-traced is traced once, straight to the decomposed graph, with the same table
(:func:`_traced_once`; the capture and the re-trace cost about 1.6 times that one
trace), falling back to the public way wherever that fails.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import hashlib
import inspect
import io
import operator
import tokenize
from collections.abc import Callable as AbcCallable
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from opsweep.catalog.registry import torchlib_registry
from opsweep.engine.adapter import PUBLIC_PATH, Exporter
from opsweep.engine.sweepconfig import Tuning

FAST_PATH = "dynamo-fast"


def _internals():
    """The torch internals the fast path needs; raises if any is missing."""
    # private torch internals: absent ones mean fallback
    import torch._ops as ops
    from torch.export import exported_program as ep
    from torch.onnx._internal.exporter import _constants, _core, _decomp, _fx_passes, _registration
    needed = [(ops, "Callable"), (ep, "_split_decomp_table_to_cia_and_python_decomp"),
              (ep, "_decompose_exported_program"), (ep, "_disable_prexisiting_fake_mode"),
              (_decomp, "create_onnx_friendly_decomposition_table"),
              (_decomp, "get_onnx_implemented_overloads"), (_fx_passes, "decompose_with_registry"),
              (_core, "export"), (_registration.ONNXRegistry, "from_torchlib"),
              (_registration.ONNXRegistry, "_cleanup_registry_based_on_opset_version"),
              (_constants, "TORCHLIB_OPSET")]
    for module, name in needed:
        if not hasattr(module, name):
            raise AttributeError(f"{module.__name__}.{name}")
    return ops, ep, _constants, _core, _decomp, _fx_passes, _registration


def fast_path_available() -> bool:
    try:
        _internals()
    except (ImportError, AttributeError):
        return False
    return True


def exporter_path(fast: bool) -> str:
    """The exporter path a sweep asking for the fast path (or not) really takes: the fast
    path where this torch has the internals it needs, else the public call."""
    return FAST_PATH if fast and fast_path_available() else PUBLIC_PATH


class _CheapCallableMeta(type):
    """Stands in for collections.abc.Callable inside torch._ops: subscripting
    (annotations evaluated at each nested def) returns the class itself, and
    isinstance keeps Callable's meaning."""

    def __getitem__(cls, item: Any) -> type:
        return cls

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, AbcCallable)


class _CheapCallable(metaclass=_CheapCallableMeta):
    pass


#: id(registry) -> (registry, CIA table, python table, every key of the two)
_DECOMP_CACHE: dict[int, tuple[Any, dict, dict, frozenset]] = {}
#: id(registry) -> (registry, skip decompositions that give back the same program, its exporter)
_SKIP: dict[int, tuple[Any, bool, Any]] = {}
#: id(registry) -> the recorder of the exporter that owns that registry (see `FastExporter.watch`)
_RECORDERS: dict[int, _Recorder] = {}


@dataclass(frozen=True)
class Trace:
    """What one export's decomposition saw: the operators (by qualified name) of the
    captured graph and of the decomposed graph, and the watched operators whose
    decomposition ran on the way (an operator reached only inside another one's
    decomposition shows in neither graph). `captured`: the capture succeeded."""

    captured: bool = False
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    decomposed: frozenset[str] = frozenset()

    @property
    def seen(self) -> frozenset[str]:
        return self.before | self.after | self.decomposed


def graph_ops(program) -> frozenset[str]:
    """Qualified names of every operator called in a program's graph and subgraphs."""
    names = set()
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op == "call_function":
                name = getattr(node.target, "name", None)
                names.add(str(name()) if callable(name) else str(node.target))
    return frozenset(names)


class _Recorder:
    """Records, for the exports of one registry, the graph operators and which
    watched operators were decomposed (through wrapped decomposition entries)."""

    def __init__(self, registry: Any, watched: frozenset[str]) -> None:
        self.registry, self.watched = registry, watched
        self.tables: tuple[Any, dict, dict] | None = None  # (source entry, cia, python)
        self.reset()

    def reset(self) -> None:
        self.captured, self.before, self.after, self.hits = False, frozenset(), frozenset(), set()

    def trace(self) -> Trace:
        return Trace(self.captured, self.before, self.after, frozenset(self.hits))

    def _wrap(self, op: Any, fn: AbcCallable) -> AbcCallable:
        name = op.name()

        def recorded(*args, **kwargs):
            self.hits.add(name)
            return fn(*args, **kwargs)
        return recorded

    def wrapped(self, cached: tuple[Any, dict, dict, frozenset], preserve: Any) -> tuple[dict, dict]:
        """The cached tables with every watched entry recording its use (built once)."""
        if self.tables is None or self.tables[0] is not cached:
            def wrap(table: dict) -> dict:
                return {op: self._wrap(op, fn) if fn is not preserve and _name(op) in self.watched
                        else fn for op, fn in table.items()}
            self.tables = (cached, wrap(cached[1]), wrap(cached[2]))
        return self.tables[1], self.tables[2]


def _name(op: Any) -> str:
    name = getattr(op, "name", None)
    return str(name()) if callable(name) else str(op)


def unchanged_by(table: Mapping[Any, Any] | None, trace: Trace | None) -> bool:
    """Whether exporting with `table` must give exactly the stock export's outcome,
    judged from the stock export's trace: the capture does not depend on the table;
    the table changes the decomposition only by removing its keys from the
    decomposition table (the exporter keeps an op it has a translation for), and the
    translation only of nodes calling its keys. So: no key was captured, decomposed
    or left in the decomposed graph. False when that cannot be judged."""
    if trace is None or not table:
        return False
    if not trace.captured:
        return True
    names = set()
    for key in table:
        if not isinstance(key, torch._ops.OpOverload):
            return False
        names.add(key.name())
    return not (names & trace.seen)
#: `_source_digest` of torch.export.exported_program._override_composite_implicit_decomp
#: as `_make_override_cia` replicates it (torch 2.13.0; 2.14.1 differs only in a comment).
#: Any other code keeps torch's own.
_REPLICATED_OVERRIDE = {"2472ddedcaf0a261"}


def _force_dispatch_to_orig_cia_callable(fake_tensor_mode, op, *args, **kwargs):
    original = kwargs.pop("original_callable")
    with fake_tensor_mode:
        return original(*args, **kwargs)


#: `_source_digest` of torch._subclasses.fake_impls' register_op_impl and _deregister_op_impl
#: whose effect on one OpOverload `_fake_rules` replicates: torch 2.14.1 and 2.15.0 also tell
#: the C++ fake dispatch; 2.13.0 keeps only the Python dict. Any other code keeps torch's own.
_REPLICATED_FAKE_RULES = {("acf415b3706ef044", "c25fbb09d71548e7"): True,
                          ("6d35d88ca9faf781", "42ee5b4073bf3d70"): False}


def _fake_rules(fake_impls):
    """(register(op, rule), deregister(op)) with the effect of torch's
    ``register_op_impl(op)(rule)`` and ``_deregister_op_impl(op)`` on one OpOverload, without
    a closure per call; torch's own functions where their code is not the one replicated."""
    digests = (_source_digest(fake_impls.register_op_impl),
               _source_digest(fake_impls._deregister_op_impl))
    tells_cpp = _REPLICATED_FAKE_RULES.get(digests)
    if tells_cpp is None:
        return (lambda op, rule: fake_impls.register_op_impl(op)(rule)), fake_impls._deregister_op_impl
    rules, checks = fake_impls.op_implementations_dict, fake_impls.op_implementations_checks

    def register(op, rule):
        if op in rules:
            raise AssertionError(f"duplicate registration: {op}")
        rules[op] = rule
        if tells_cpp:
            schema = op._schema
            torch._C._fake_dispatch_register_op_impl(schema.name, schema.overload_name)

    def deregister(op):
        if op in rules:
            del rules[op]
            if tells_cpp:
                schema = op._schema
                torch._C._fake_dispatch_deregister_op_impl(schema.name, schema.overload_name)
        for check, impl in checks:
            if check is op:
                checks.remove((check, impl))
                break
    return register, deregister


class _Override:
    """What overriding one op's CompositeImplicitAutograd kernel with one decomposition
    does, for one kernel table before the override (`before`, kept unchanged)."""

    __slots__ = ("op", "decomp", "before", "additions", "fake")

    def __init__(self, op, decomp, before: dict, additions: dict, fake) -> None:
        self.op, self.decomp, self.before, self.additions, self.fake = \
            op, decomp, before, additions, fake


def _make_override_cia(ep):
    """torch's _override_composite_implicit_decomp, with the same registrations made
    directly in each op's kernel table. What an op receives depends only on its kernel
    table before the override and on its decomposition, so that is computed once per
    op and re-applied while both are unchanged: an export overrides some 500 ops, so
    no kernel table is copied and no closure is made per op while nothing changed (each
    allocation of a container brings the next garbage collection closer)."""

    # private torch internals: absent ones mean fallback
    from torch._higher_order_ops.utils import autograd_not_implemented
    from torch._subclasses import fake_impls
    cia_key = torch._C.DispatchKey.CompositeImplicitAutograd
    register, deregister = _fake_rules(fake_impls)
    rules = fake_impls.op_implementations_dict
    # (id(op), id(decomp)) -> _Override: one per table an op is decomposed with, so targets
    # taking turns keep theirs
    cache: dict[tuple[int, int], _Override] = {}

    def prepare(op, decomp_callable, before: dict) -> _Override:
        additions = {}
        missing = [k for k in ep._AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE if k not in before]
        if missing:
            not_implemented = autograd_not_implemented(op, deferred_error=True)
            additions.update(dict.fromkeys(missing, not_implemented))
        orig_cia_callable = ep._get_decomp_for_cia(op)  # before the CIA kernel changes
        additions[cia_key] = decomp_callable
        for key in ep._BACKEND_KEYS_TO_OVERRIDE:
            if key not in before and key not in additions:
                additions[key] = orig_cia_callable
        fake = functools.partial(_force_dispatch_to_orig_cia_callable,
                                 original_callable=orig_cia_callable)
        entry = cache[id(op), id(decomp_callable)] = _Override(op, decomp_callable, before,
                                                               additions, fake)
        return entry

    @contextlib.contextmanager
    def override(cia_ops_to_callable):
        saved: list[_Override] = []
        for op, decomp_callable in cia_ops_to_callable.items():
            kernels = op.py_kernels
            entry = cache.get((id(op), id(decomp_callable)))
            if (entry is None or entry.op is not op or entry.decomp is not decomp_callable
                    or kernels != entry.before):
                entry = prepare(op, decomp_callable, kernels.copy())
            saved.append(entry)
            kernels.update(entry.additions)
            if op not in rules:
                register(op, entry.fake)
            op._dispatch_cache.clear()
        try:
            yield
        finally:
            for entry in saved:
                op = entry.op
                op.py_kernels.clear()
                op.py_kernels.update(entry.before)
                op._dispatch_cache.clear()
                deregister(op)

    return override


def _source_digest(fn) -> str:
    """sha256[:16] of a function's code tokens: comments and blank lines do not count,
    so a release that only fixes a comment keeps the replica."""
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return ""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    tokens = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
              if tok.type not in skip]
    return hashlib.sha256("\x00".join(tokens).encode()).hexdigest()[:16]


#: `_source_digest` of torch._decomp.decompositions_for_rng.PhiloxStateTracker.reset (torch
#: 2.11.0 to 2.15.0): three fresh PhiloxState, each two empty tensors.
_REPLICATED_RNG_RESET = {"0290965ce17cb1e7"}


def _cheap_rng_reset() -> None:
    """AOT autograd resets its philox rng tracker on entering and leaving every trace, inside
    the fake mode, so each of its empty tensors becomes a FakeTensor built from a real
    constant (~0.5 ms each, ~3 ms a decomposition). The tracker's state is read only when
    rng ops are functionalized (``torch._functorch.config.functionalize_rng_ops``, off in
    export; the next reset replaces it either way): with that off, the same reset runs
    outside the dispatch modes and makes plain empty tensors. With it on, torch's own."""
    try:
        # private torch internals: absent ones mean fallback
        from torch._decomp import decompositions_for_rng as rng
        from torch._functorch import config
        from torch.utils._python_dispatch import _disable_current_modes
    except ImportError:
        return
    tracker = getattr(rng, "PhiloxStateTracker", None)
    original = getattr(getattr(tracker, "reset", None), "__func__", None)
    if original is None or _source_digest(original) not in _REPLICATED_RNG_RESET:
        return

    def reset(cls):
        if getattr(config, "functionalize_rng_ops", True):
            return original(cls)
        with _disable_current_modes():
            return original(cls)
    reset._opsweep_original = original
    tracker.reset = classmethod(reset)


def _install(ops, ep, _decomp, _fx_passes) -> None:
    """Process-wide and idempotent: cached decompositions, cheap annotations."""
    if getattr(_fx_passes.decompose_with_registry, "_opsweep", False):
        return
    ops.Callable = _CheapCallable
    _cheap_rng_reset()
    original = getattr(ep, "_override_composite_implicit_decomp", None)
    if original is not None and _source_digest(original) in _REPLICATED_OVERRIDE and _has_fake_rules():
        ep._override_composite_implicit_decomp = _make_override_cia(ep)

    def decompose_with_registry(exported_program, registry):
        cia, python_table, keys, recorder = _tables(registry, ep, _decomp)
        if getattr(exported_program, _TRACED_ONCE, False):
            # captured already decomposed (FastExporter's single trace): what the re-trace
            # would give back. Its trace has no captured graph, and needs none for
            # `unchanged_by`: a table key in the captured graph is either decomposed through
            # the table (recorded as decomposed), or left in the decomposed graph, or rewritten
            # on the way whatever the table (functionalization, Python kernels, dead code), so
            # the custom target's graph would be the stock one.
            if recorder is not None:
                recorder.captured, recorder.after = True, graph_ops(exported_program)
            return exported_program
        if recorder is not None:
            recorder.captured, recorder.before = True, graph_ops(exported_program)
        skip = _SKIP.get(id(registry))
        if skip is not None and skip[0] is registry and skip[1] and decomposes_to_itself(
                exported_program, keys):
            skip[2].skipped += 1
            if recorder is not None:
                recorder.after = recorder.before
            return exported_program

        if skip is not None and skip[0] is registry and skip[2]._single:
            ops = recorder.before if recorder is not None else graph_ops(exported_program)
            skip[2].plain_capture = _plain_capture(exported_program, ops, keys)
        # what ExportedProgram.run_decompositions does after splitting the table
        @ep._disable_prexisiting_fake_mode
        def run():
            return ep._decompose_exported_program(
                exported_program, cia_to_decomp=dict(cia), python_decomp_table=dict(python_table),
                joint_loss_index=None, decompose_custom_triton_ops=False)
        decomposed = run()
        if skip is not None and skip[0] is registry:
            skip[2].retraced += 1
        if recorder is not None:
            recorder.after = graph_ops(decomposed)
        return decomposed

    decompose_with_registry._opsweep = True
    _fx_passes.decompose_with_registry = decompose_with_registry


def _tables(registry, ep, _decomp) -> tuple[dict, dict, frozenset, _Recorder | None]:
    """The ONNX decomposition table of `registry` split as the exporter splits it (CIA
    overrides, python decompositions, every key of the two), built once per registry; with
    the entries its recorder watches recording their use, and that recorder (or None).
    `ep` and `_decomp`: torch.export.exported_program and the exporter's _decomp."""
    cached = _DECOMP_CACHE.get(id(registry))
    if cached is None or cached[0] is not registry:
        registered = set(_decomp.get_onnx_implemented_overloads(registry))
        table = _decomp.create_onnx_friendly_decomposition_table(registered)
        cia, python_table = ep._split_decomp_table_to_cia_and_python_decomp(dict(table))
        cached = _DECOMP_CACHE[id(registry)] = (registry, cia, python_table,
                                                frozenset(cia) | frozenset(python_table))
    _, cia, python_table, keys = cached
    recorder = _RECORDERS.get(id(registry))
    if recorder is None or recorder.registry is not registry:
        return cia, python_table, keys, None
    if recorder.watched:
        cia, python_table = recorder.wrapped(cached, _preserve_marker(ep))
    return cia, python_table, keys, recorder


#: set on an ExportedProgram traced once with the decomposition table (see `_traced_once`)
_TRACED_ONCE = "_opsweep_traced_once"


def _traced_once(registry):
    """A capture strategy that traces the module once, straight to the decomposed graph:
    ``torch.export``'s non-strict trace to ATen IR (``pre_dispatch=False``) with the ONNX
    decomposition table and its CompositeImplicitAutograd overrides, as
    ``decompose_with_registry``'s re-trace applies them to the captured graph, under the
    contexts the exporter's non-strict capture sets. No refinement of dynamic shapes: what
    fails here is exported again the public way (`FastExporter.export`)."""
    # private torch internals: absent ones mean fallback
    from torch.export import _trace
    from torch.export import exported_program as ep
    from torch.onnx._internal.exporter import _capture_strategies, _decomp
    flags = _capture_strategies._flags  # what its non-strict capture reads

    class TracedOnce(_capture_strategies.TorchExportNonStrictStrategy):
        def _capture(self, model, args, kwargs, dynamic_shapes):
            cia, python_table, _keys, _recorder = _tables(registry, ep, _decomp)
            original = _trace._export_to_aten_ir
            _trace._export_to_aten_ir = functools.partial(original, decomp_table=dict(python_table))
            try:
                with (_capture_strategies.patch_dynamic_shape_rnn_decompositions(dynamic_shapes),
                      torch.fx.experimental._config.patch(backed_size_oblivious=True),
                      ep._override_composite_implicit_decomp(dict(cia))):
                    program = _trace._export(
                        model, args, kwargs, dynamic_shapes, strict=False, pre_dispatch=False,
                        prefer_deferred_runtime_asserts_over_guards=(
                            flags.PREFER_DEFERRED_RUNTIME_ASSERTS_OVER_GUARDS))
            finally:
                _trace._export_to_aten_ir = original
            setattr(program, _TRACED_ONCE, True)
            return program
    return TracedOnce


def _plain_capture(program, ops: frozenset[str], keys: frozenset) -> bool:
    """Whether a captured program may be traced once the next time (`_traced_once`): one
    graph, with no operator whose CompositeImplicitAutograd kernel the exporter's RNN patch
    replaces. That patch (``patch_dynamic_shape_rnn_decompositions``) is on for a dynamic
    capture, and for a decomposition when the program has range constraints, so the two ways
    decompose LSTM and GRU differently (the catalog-wide run found gru's and lstm's dynamic
    outcomes changed); a higher-order operator (the patch's while_loop) is kept out too.
    `ops`: the program's `graph_ops`."""
    return _one_graph(program) and not (ops & _rnn_patched(keys))


def _one_graph(program) -> bool:
    """No subgraph: no higher-order operator's graph module under the program's own."""
    module = program.graph_module
    return all(sub is module for sub in module.modules())


_RNN_PATCHED: dict[frozenset, frozenset[str]] = {}


def _rnn_patched(keys: frozenset) -> frozenset[str]:
    """Qualified names of the operators among `keys` (and the ones torch names in its
    decomposition tables) whose CompositeImplicitAutograd kernel or post-autograd
    decomposition the exporter's RNN patch changes, found by entering it once."""
    found = _RNN_PATCHED.get(keys)
    if found is not None:
        return found
    # private torch internals: absent ones mean fallback
    from torch._decomp import global_decomposition_table
    from torch.onnx._internal.exporter import _capture_strategies
    tables = list(global_decomposition_table.values())
    candidates = set(keys).union(*tables)

    def state():
        return {op: (op.py_kernels.get(_CIA), [t.get(op) for t in tables])
                for op in candidates if isinstance(op, torch._ops.OpOverload)}
    outside = state()
    with _capture_strategies.patch_dynamic_shape_rnn_decompositions(True):
        inside = state()
    found = _RNN_PATCHED[keys] = frozenset(op.name() for op in outside
                                           if outside[op] != inside.get(op))
    return found


def _single_trace_available() -> bool:
    try:
        # private torch internals: absent ones mean fallback
        from torch.export import _trace
        from torch.onnx._internal.exporter import _capture_strategies as strategies
        return (all(hasattr(_trace, n) for n in ("_export", "_export_to_aten_ir"))
                and all(hasattr(strategies, n) for n in (
                    "TorchExportNonStrictStrategy", "patch_dynamic_shape_rnn_decompositions",
                    "CAPTURE_STRATEGIES"))
                and hasattr(getattr(strategies, "_flags", None),
                            "PREFER_DEFERRED_RUNTIME_ASSERTS_OVER_GUARDS"))
    except ImportError:
        return False


_CIA = torch._C.DispatchKey.CompositeImplicitAutograd
_FUNCTIONALIZE = torch._C.DispatchKey.Functionalize
_META = torch._C.DispatchKey.Meta


def decomposes_to_itself(program, keys: frozenset) -> bool:
    """Whether decomposing `program` with a table of `keys` must give back the same program,
    so the exporter's re-trace can be skipped. It re-traces the graph through AOT autograd
    with functionalization, the Python dispatcher and the table. A node comes out of that as
    it went in when its operator is an OpOverload that is not a key of the table (no
    decomposition is looked up for it); has no CompositeImplicitAutograd or Functionalize
    kernel (so it is neither decomposed by default nor rewritten by functionalization) and
    no Python kernel but a Meta one; and is functional: its schema mutates nothing and
    returns no alias (functionalization rewrites mutations and views). A tuple's item taken
    from such an operator's result stays as it is when it is used (an unused one is
    dropped). The graph must be one graph (a higher-order operator's subgraph is traced
    again), read no attribute and mutate no buffer or input. Anything else, including
    Python operators on sizes, is decomposed as before. Proven against the full decomposition, model for model, by
    ``tests/integration/test_fastpath.py``."""
    if not _one_graph(program):
        return False
    module = program.graph_module
    signature = program.graph_signature
    if (signature.buffers_to_mutate or signature.user_inputs_to_mutate
            or getattr(signature, "input_tokens", None) or getattr(signature, "output_tokens", None)):
        return False
    for node in module.graph.nodes:
        if node.op == "get_attr":
            return False
        if node.op != "call_function":
            continue
        op = node.target
        if op is operator.getitem and node.users and _from_call(node.args[0]):
            continue  # a used output of a multi-output operator, checked as its own node
        if not isinstance(op, torch._ops.OpOverload) or op in keys:
            return False
        if any(torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), key)
               for key in (_CIA, _FUNCTIONALIZE)) or _python_kernels(op):
            return False
        schema = op._schema
        if schema.is_mutable or any(r.alias_info is not None for r in schema.returns):
            return False
    return True


def _python_kernels(op: Any) -> bool:
    """Whether `op` has a Python kernel the re-trace's Python dispatcher may run instead of
    the op itself (native_batch_norm's CompositeImplicitAutograd and Autograd kernels turn
    it into _native_batch_norm_legit_functional); Meta kernels only compute shapes."""
    return (any(key != _META for key in op.py_kernels) or bool(op.python_key_table)
            or bool(getattr(op, "functorch_table", None)))


def _from_call(value: Any) -> bool:
    return isinstance(value, torch.fx.Node) and value.op == "call_function"


def _has_fake_rules() -> bool:
    # private torch internals: absent ones mean fallback
    from torch._subclasses import fake_impls
    return all(hasattr(fake_impls, name) for name in
               ("_is_op_registered_to_fake_rule", "register_op_impl", "_deregister_op_impl",
                "op_implementations_dict", "op_implementations_checks"))


def _preserve_marker(ep) -> Any:
    return getattr(ep, "_special_op_to_preserve_cia", None)


def _settle() -> None:
    """Everything alive now (torch, the registry, the decomposition tables) lives as long as
    the process: moved out of the cyclic collector's way, so its full collections walk only
    what the exports allocate (~2 ms an export otherwise). Which objects are collected, and
    when, changes no outcome: nothing here depends on finalizers. At exit they are handed
    back, so the interpreter's last collection frees them as it would have (nanobind
    extensions report instances left alive as leaks)."""
    gc.collect()
    gc.freeze()
    if not _SETTLED:
        _SETTLED.append(True)
        atexit.register(gc.unfreeze)


_SETTLED: list[bool] = []


#: single traces of one kind that fail in a row before its exports go the public way only
#: (a spec that fails after its decomposition would otherwise pay for both on every export)
SINGLE_TRACE_FAILURES = 2


class FastExporter(Exporter):
    """Same outcome as :class:`Exporter`, with per-process set-up done once."""

    path = FAST_PATH

    def __init__(self, custom_translation_table: Mapping[AbcCallable, Any] | None = None,
                 opset: int | None = None, options: Tuning = Tuning(),
                 digest: str = "none") -> None:
        super().__init__(custom_translation_table, opset, digest, options)
        self.options: Tuning = options
        ops, ep, constants, core, decomp, fx_passes, _ = _internals()
        self._core = core
        # the public call builds its registry for max(opset, TORCHLIB_OPSET)
        registry_opset = max(self.opset, constants.TORCHLIB_OPSET)
        self.registry = torchlib_registry(registry_opset)  # from_torchlib's, made faster
        for torch_op, onnx_op in (self.custom_translation_table or {}).items():
            self.registry.register_op(torch_op, onnx_op, is_complex=False)
        _install(ops, ep, decomp, fx_passes)
        #: how many exports skipped their decomposition (see :func:`decomposes_to_itself`),
        #: re-traced the captured graph, or were traced once straight to the decomposed graph
        self.skipped = self.retraced = self.traced_once = 0
        self.fell_back = 0  # single traces that failed (each then exported the public way)
        self.plain_capture = False  # of the last re-traced program (see `_plain_capture`)
        #: what each module's last export needed (see `_kind`): True when its decomposition
        #: re-traced, so the next export of its kind is traced once (`_traced_once`)
        self._needs_retrace: dict[Any, bool] = {}
        #: single traces of a kind that failed in a row (each then exported the public way)
        self._failed_once: dict[Any, int] = {}
        self._single = options.single and _single_trace_available()
        self._strategy: type | None = None  # `_traced_once`'s class, made at first use
        _SKIP[id(self.registry)] = (self.registry, options.skip, self)
        self._recorder: _Recorder | None = None
        self.last_trace: Trace | None = None  # of the last export, when watching
        _settle()

    def watch(self, ops: Iterable[str]) -> None:
        """Trace every later export: which operators its graphs hold, and which of
        `ops` (qualified names) were decomposed (see :func:`unchanged_by`)."""
        self._recorder = _RECORDERS[id(self.registry)] = _Recorder(self.registry, frozenset(ops))

    def recorded(self) -> Trace | None:
        """What the decomposition of the export under way (or the last one) saw so far, when
        watching (`last_trace` is set only once the export returned)."""
        return self._recorder.trace() if self._recorder is not None else None

    def export(self, module: torch.nn.Module, args: tuple[Any, ...], dynamic_shapes=None):
        """The public call's model. Where the last export of the same kind of module had its
        captured graph re-traced by the decomposition (and that graph was `_plain_capture`),
        this one is first traced once, straight to the decomposed graph (`_traced_once`: the
        capture and the re-trace cost about 1.6 times that one trace). If that raises
        anything, at any stage, the module is exported the public way, whose outcome, error
        included, is the one returned; after SINGLE_TRACE_FAILURES such failures in a row, its
        kind is exported the public way only. ``tests/integration/test_fastpath.py`` proves
        both give the same outcome."""
        kind = (_kind(module), dynamic_shapes is not None)
        if (self._single and self._needs_retrace.get(kind, False)
                and self._failed_once.get(kind, 0) < SINGLE_TRACE_FAILURES):
            try:
                if self._strategy is None:
                    self._strategy = _traced_once(self.registry)
                model = self._export(module, args, dynamic_shapes, self._strategy)
            except Exception:
                self._failed_once[kind] = self._failed_once.get(kind, 0) + 1
                self.fell_back += 1
            else:
                self._failed_once.pop(kind, None)
                self.traced_once += 1
                return model
        retraced = self.retraced
        try:
            return self._export(module, args, dynamic_shapes, None)
        finally:  # a program that failed after its re-trace re-traced all the same
            self._needs_retrace[kind] = self.retraced > retraced and self.plain_capture

    def _export(self, module, args, dynamic_shapes, strategy):
        # private torch internals: absent ones mean fallback
        from torch.onnx._internal.exporter import _capture_strategies
        recorder = self._recorder
        self.last_trace = None
        if recorder is not None:
            recorder.reset()
        strategies = _capture_strategies.CAPTURE_STRATEGIES
        if strategy is not None:
            _capture_strategies.CAPTURE_STRATEGIES = (strategy,)
        try:
            with _stack_traces(self.options.traces):
                program = self._core.export(module, args, None, registry=self.registry,
                                            dynamic_shapes=dynamic_shapes,
                                            opset_version=self.opset, verbose=False,
                                            optimize=True)
        finally:
            _capture_strategies.CAPTURE_STRATEGIES = strategies
            if recorder is not None:
                self.last_trace = recorder.trace()
        return program.model_proto


@contextlib.contextmanager
def _stack_traces(recorded: bool):
    """torch's own switch for a Python stack trace per traced graph node
    (``torch.fx.config.do_not_emit_stack_traces``), set for one export and restored. Not
    recorded, each trace skips a traceback extraction and symbolization per node (what that
    saves: docs/performance.md); the exporter copies a node's stack trace only into the
    ONNX node's ``pkg.torch.onnx.stack_trace`` metadata, and an outcome's error line is the
    first line of its message, so outcomes are the public call's
    (``tests/integration/test_fastpath.py``). Where torch lacks the switch, nothing changes."""
    # private torch internals: absent ones mean fallback
    from torch.fx import config as fx_config
    saved = getattr(fx_config, "do_not_emit_stack_traces", None)
    if saved is None:
        yield
        return
    fx_config.do_not_emit_stack_traces = not recorded
    try:
        yield
    finally:
        fx_config.do_not_emit_stack_traces = saved


def _kind(module: torch.nn.Module) -> Any:
    """What an export's need of a re-trace is predicted by: what the module calls (opsweep's
    `runner.Call` names the spec's function or module as `callee`; a module by its class).
    Specs keep the need from one signature to the next (on every 8th spec of the catalog, all
    1130 exports after a spec's first that re-traced followed one that did, and none that
    did not); a wrong guess costs time only."""
    target = getattr(module, "callee", module)
    if isinstance(target, torch.nn.Module):
        return type(target)
    try:
        hash(target)
    except TypeError:
        return type(target)
    return target


def make_exporter(fast: bool, custom_translation_table=None,
                  options: Tuning = Tuning(), digest: str = "none") -> Exporter:
    """The dynamo exporter, the fast path's (`fast`) or the public call's, with the table
    `custom_translation_table` (of source `digest`) and the fast path's shortcuts `options`."""
    if fast:
        return FastExporter(custom_translation_table, options=options, digest=digest)
    return Exporter(custom_translation_table, digest=digest, options=options)
