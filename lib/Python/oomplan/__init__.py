"""oomplan: will this ONNX model fit in GPU memory? (docs/embedding.md)

    import oomplan
    p = oomplan.plan("model.onnx", batch=8, seq=1024, budget="24G", train=True)
    p.fits, p.total_bytes, p.report["peak"]["live_bytes"]
    oomplan.max_batch("model.onnx", budget="16G", train=True)
    e = oomplan.execute("model.onnx", inputs={"x": ("float", (1, 3), raw)})
    e.outputs["y"].dims, e.regions["arena"].high_water_bytes

Every option of the oomplan command line works as a keyword argument:
``algo="best-fit"`` is ``--algo=best-fit``, ``io_in_arena=True`` is
``--io-in-arena``, a list repeats the option. Planning releases the GIL, so
threads plan in parallel.

Errors raise a subclass of ``oomplan.Error``: ``InputError`` (a bad model,
option or value), ``UnsupportedError`` (valid input oomplan cannot handle
yet), ``SizeOverflowError`` (a size beyond 64 bits), ``InternalError`` (a bug
in oomplan) and ``FileError`` (a file that cannot be read or written). The
names do not shadow Python's own OverflowError and IOError.
"""
import json

from . import _oomplan

__all__ = [
    "plan", "max_batch", "max_seq", "serve", "run", "execute", "Plan",
    "Execution", "Tensor", "Region", "Capacity", "Error",
    "InputError", "UnsupportedError", "SizeOverflowError", "InternalError",
    "FileError", "version", "__version__",
]


class Error(Exception):
    """An oomplan error. ``category`` is its kind: "input", "unsupported",
    "overflow", "internal" or "io"."""

    category = "internal"


class InputError(Error):
    """The model, an option or a value is wrong."""

    category = "input"


class UnsupportedError(Error):
    """Valid input that oomplan cannot handle (yet)."""

    category = "unsupported"


class SizeOverflowError(Error):
    """A size does not fit 64 bits."""

    category = "overflow"


class InternalError(Error):
    """A bug in oomplan."""

    category = "internal"


class FileError(Error):
    """A file could not be read or written."""

    category = "io"


_ERRORS = {cls.category: cls for cls in
           (InputError, UnsupportedError, SizeOverflowError, InternalError,
            FileError)}


class Capacity:
    """A capacity search's answer: ``max`` (largest value that fits, 0 when
    not even 1 does), ``at_least`` (the search's cap fits: maybe larger),
    ``bytes_at_max`` (device bytes at ``max``)."""

    __slots__ = ("max", "at_least", "bytes_at_max")

    def __init__(self, max, at_least, bytes_at_max):
        self.max, self.at_least, self.bytes_at_max = max, at_least, bytes_at_max

    def __int__(self):
        return self.max

    def __repr__(self):
        return "Capacity(max=%d, at_least=%s, bytes_at_max=%d)" % (
            self.max, self.at_least, self.bytes_at_max)


class Plan:
    """One planning run: the verdict, the bytes, the JSON plan."""

    def __init__(self, result):
        self._r = result
        self._doc = None

    @property
    def fits(self):
        """True when the plan fits the budget (or no budget was given)."""
        return self._r.fits

    @property
    def exit_code(self):
        """The CLI's exit code: 0 fits, 2 does not fit."""
        return self._r.exit_code

    @property
    def total_bytes(self):
        """Device bytes of the plan: weights + inputs/outputs + arena."""
        return self._r.total_bytes

    @property
    def budget_bytes(self):
        """The budget in bytes, or None."""
        return self._r.budget_bytes

    @property
    def overhead_bytes(self):
        return self._r.overhead_bytes

    @property
    def document(self):
        """The whole JSON plan as a dict (docs/plan-json.md), or None when
        another --emit was asked for."""
        if self._doc is None and self._r.is_json:
            self._doc = json.loads(self._r.output)
        return self._doc

    @property
    def report(self):
        """The memory report (the JSON plan's "report" object) as a dict."""
        doc = self.document
        return None if doc is None else doc.get("report")

    @property
    def output(self):
        """What --emit asked for, as text (the JSON plan by default)."""
        return self._r.output

    @property
    def diagnostics(self):
        """[(level, message)]: the notes and warnings the CLI prints."""
        return list(self._r.diagnostics)

    @property
    def warnings(self):
        return [m for level, m in self._r.diagnostics if level == "warning"]

    @property
    def max_batch(self):
        """A Capacity when --max-batch ran, else None."""
        c = self._r.max_batch
        return None if c is None else Capacity(*c)

    @property
    def max_seq(self):
        c = self._r.max_seq
        return None if c is None else Capacity(*c)

    @property
    def fit_strategy(self):
        """The fit chooser's decision, or None when it did not run."""
        return self._r.fit_strategy

    @property
    def fit_overhead_percent(self):
        return self._r.fit_overhead_percent

    def to_json(self):
        """The JSON plan as text, exactly as `oomplan --emit=json` writes
        it."""
        if not self._r.is_json:
            raise InputError("this plan was emitted as text, not JSON")
        return self._r.output

    def __repr__(self):
        return "<oomplan.Plan fits=%s total_bytes=%d>" % (self.fits,
                                                          self.total_bytes)


def _flag(name):
    return "--" + name.replace("_", "-")


def _option_args(options):
    """Keyword arguments as CLI options: True is a flag, False --name=false,
    None is left out, a list or tuple repeats the option."""
    args = []
    for key in sorted(options):
        value = options[key]
        if value is None:
            continue
        if key == "input_shape" and isinstance(value, dict):
            value = ["%s=%s" % (name, "x".join(str(int(d)) for d in dims))
                     for name, dims in sorted(value.items())]
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is True:
                args.append(_flag(key))
            elif v is False:
                args.append(_flag(key) + "=false")
            else:
                args.append("%s=%s" % (_flag(key), v))
    return args


def _check(result):
    if result.exit_code == 1:
        cls = _ERRORS.get(result.category, InternalError)
        raise cls(result.error_message)
    return Plan(result)


def run(args):
    """Runs an oomplan command line (a list: the model path and options, as
    after `oomplan`). Unlike the CLI, the output defaults to --emit=json.
    Returns a Plan; raises an Error subclass on error."""
    if isinstance(args, str):
        raise TypeError("run() takes a list of arguments, not a string")
    return _check(_oomplan.run([str(a) for a in args], True))


def serve(model, max_model_len, budget=None, **options):
    """An LLM server's KV cache on one device (``--serve``, docs/serving.md):
    the JSON answer as a dict, with ``kv_bytes_per_token``, ``kv_blocks``,
    ``kv_capacity_tokens``, ``max_concurrency``, ``longest_context`` and
    ``starts`` (False where the server would fail to start: a verdict, not
    an error). Other options as keywords: ``device="A100-80GB"``,
    ``kv_dtype="fp8"``, ``gpu_memory_utilization=0.95``, ...
    """
    if "emit" in options:
        raise TypeError("serve() returns the JSON answer; use oomplan.run() "
                        "for --emit=vllm")
    args = [str(model), "--serve", "--max-model-len=%d" % max_model_len]
    if budget is not None:
        args.append("--budget=%s" % budget)
    return _check(_oomplan.run(args + _option_args(options), True)).document


def _model_args(model, batch, seq, dims, budget, train, optimizer, fit,
                options):
    args = [str(model)]
    if batch is not None:
        args.append("--batch=%d" % batch)
    if seq is not None:
        args.append("--seq=%d" % seq)
    for name, value in sorted((dims or {}).items()):
        args.append("--dim=%s=%d" % (name, value))
    if budget is not None:
        args.append("--budget=%s" % budget)
    if train:
        args.append("--train")
    # The CLI refuses --optimizer without --train (it would be ignored);
    # the default only applies to training.
    if optimizer is not None and (train or optimizer != "adam"):
        args.append("--optimizer=%s" % optimizer)
    if fit is True:
        args.append("--fit")
    elif fit is False:
        args.append("--no-fit")
    if "emit" in options:
        raise TypeError("plan() always emits JSON; use oomplan.run() for "
                        "other --emit kinds")
    return args + _option_args(options)


def plan(model, batch=None, seq=None, dims=None, budget=None, train=False,
         optimizer="adam", fit=None, **options):
    """Plans MODEL (.onnx, .onnxtxt or MiniMalloc .csv) and returns a Plan.

    batch, seq: bind the batch and sequence symbols; dims: {symbol: value};
    budget: "24G" (GiB), "300MB" (decimal) or bytes; train: plan a training
    step with `optimizer`; fit: None fits over budget as the CLI does, True
    is --fit, False is --no-fit. Any other CLI option as a keyword:
    device="L4", overhead="2G", input_shape={"x": (1, 3, 960, 960)},
    precision="bf16-mixed", max_batch=True, ...
    """
    return run(_model_args(model, batch, seq, dims, budget, train, optimizer,
                           fit, options))


def _capacity(which, model, budget, kwargs):
    kwargs = dict(kwargs)
    kwargs[which] = True
    p = plan(model, budget=budget, **kwargs)
    c = getattr(p, which)
    if c is None:
        raise InternalError("the %s search did not run" % which)
    return c.max


def max_batch(model, budget=None, seq=None, train=False, **kwargs):
    """The largest batch that fits BUDGET (the CLI's --max-batch answer), 0
    when not even batch 1 fits. Without a budget, device= gives one."""
    return _capacity("max_batch", model, budget,
                     dict(kwargs, seq=seq, train=train))


def max_seq(model, budget=None, batch=None, train=False, **kwargs):
    """The longest sequence that fits BUDGET (--max-seq), 0 when not even 1
    fits."""
    return _capacity("max_seq", model, budget,
                     dict(kwargs, batch=batch, train=train))


class Tensor:
    """A tensor execute() returned: ``name``, ``type`` (ONNX's text spelling:
    "float", "int64", ...), ``dims`` (a tuple) and ``data`` (its packed
    little-endian bytes)."""

    __slots__ = ("name", "type", "dims", "data")

    def __init__(self, name, type, dims, data):
        self.name, self.type, self.dims, self.data = (name, type, tuple(dims),
                                                      data)

    def __repr__(self):
        return "Tensor(%r, %r, %r, %d bytes)" % (self.name, self.type,
                                                 self.dims, len(self.data))


class Region:
    """One region of the plan: ``planned_bytes``, and the run's highest
    byte in it, ``high_water_bytes``, also rounded up to the plan's
    alignment (``high_water_aligned_bytes``, which equals ``planned_bytes``
    when the run kept to the plan)."""

    __slots__ = ("name", "planned_bytes", "high_water_bytes",
                 "high_water_aligned_bytes")

    def __init__(self, name, planned, high_water, aligned):
        self.name, self.planned_bytes = name, planned
        self.high_water_bytes, self.high_water_aligned_bytes = (high_water,
                                                                aligned)

    def __repr__(self):
        return "Region(%r, planned_bytes=%d, high_water_bytes=%d)" % (
            self.name, self.planned_bytes, self.high_water_bytes)


class Execution:
    """One execute() call: the outputs and what the run measured."""

    def __init__(self, result):
        self._r = result
        self.outputs = {t[0]: Tensor(*t) for t in result.outputs}
        self.regions = {r[0]: Region(*r) for r in result.regions}
        self._doc = None

    @property
    def exit_code(self):
        """oomplan-run's exit code: 0 ran and every check passed, 1 a check
        failed, 2 the plan does not fit the budget (not run)."""
        return self._r.exit_code

    @property
    def ok(self):
        return self._r.exit_code == 0

    @property
    def ran(self):
        return self._r.ran

    @property
    def fits(self):
        return self._r.fits

    @property
    def fitted(self):
        return self._r.fitted

    @property
    def passes(self):
        """Micro-batch passes per run of the model."""
        return self._r.passes

    @property
    def plan_total_bytes(self):
        return self._r.plan_total_bytes

    @property
    def budget_bytes(self):
        return self._r.budget_bytes

    @property
    def seconds(self):
        """{"plan": s, "load": s, "run": s}: wall-clock times."""
        return {"plan": self._r.plan_seconds, "load": self._r.load_seconds,
                "run": self._r.run_seconds}

    @property
    def report(self):
        """oomplan-run's report: its --json object as a dict (the default),
        or its text with json=False."""
        text = self._r.report
        if not text.startswith("{"):
            return text
        if self._doc is None:
            self._doc = json.loads(text)
        return self._doc

    @property
    def diagnostics(self):
        """[(level, message)]: the notes and warnings oomplan-run prints."""
        return list(self._r.diagnostics)

    def __repr__(self):
        return "<oomplan.Execution exit_code=%d outputs=%s>" % (
            self.exit_code, sorted(self.outputs))


def execute(model, inputs=None, batch=None, seq=None, dims=None, budget=None,
            **options):
    """Plans MODEL as plan() does and runs the plan in its regions on the CPU
    (oomplan-run as one call); returns an Execution.

    inputs: {name: (type, dims, bytes)}, e.g. {"x": ("float", (2, 3),
    struct.pack("6f", *values))}; inputs not given come from input=["NAME=
    FILE.pb"] or inputs_dir="DIR", or are seeded random values. Any other
    oomplan-run option as a keyword: check="unplanned", poison=True,
    threads=2, repeat=3, random_weights=True, output_dir="out", ...
    Raises an Error subclass on error; a failed check is exit_code 1.
    """
    args = [str(model)]
    if batch is not None:
        args.append("--batch=%d" % batch)
    if seq is not None:
        args.append("--seq=%d" % seq)
    for name, value in sorted((dims or {}).items()):
        args.append("--dim=%s=%d" % (name, value))
    if budget is not None:
        args.append("--budget=%s" % budget)
    given = [(str(name), str(t), [int(d) for d in shape], bytes(data))
             for name, (t, shape, data) in sorted((inputs or {}).items())]
    result = _oomplan.execute(args + _option_args(options), given, True)
    if result.category is not None:
        cls = _ERRORS.get(result.category, InternalError)
        raise cls(result.error_message)
    return Execution(result)


def version():
    return _oomplan.version()


__version__ = _oomplan.version()
