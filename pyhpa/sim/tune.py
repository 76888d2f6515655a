"""``pyhpa tune``'s search: the space of HPA settings, its candidates, the Pareto frontier and the
budget choice.

The space is a list of *dimensions*, each one tuned field with the values to try, for every HPA
of the scenario (global) or for one HPA (per HPA). A candidate takes one value of each dimension;
the candidates are the product of the dimensions, in a fixed order (so a run's candidates, their
numbers and the frontier file are the same however they are evaluated). The space comes from the
scenario's ``tune:`` section, command-line lists (:func:`parse_list`, :func:`parse_policies`)
replace a field's values, and a field declared nowhere keeps the HPA's own setting; when neither
declares anything, :func:`default_dimensions` gives the space::

    tune:
      target: [50, 60, 70, 80]          # metric target: a whole percent for Utilization targets,
                                        # a quantity ("500m", 20) for AverageValue/Value targets
      metric: 0                         # which of spec.metrics `target` sets (default: the first)
      minReplicas: {from: 1, to: 3}     # a list, or a range {from, to, step (default 1)}
      scaleUp:
        stabilizationWindowSeconds: [0, 60]
        policies:                       # alternatives: each a policy list, or {policies, selectPolicy}
        - [{type: Percent, value: 100, periodSeconds: 15}]
        - {selectPolicy: Min, policies: [{type: Pods, value: 2, periodSeconds: 60}]}
      scaleDown: {stabilizationWindowSeconds: [0, 300, 600]}
      hpas:                             # per HPA (namespace/name): the same fields, tried for
        shop/web: {minReplicas: [2, 3]} # that HPA independently of the others
      budget: 0.5%                      # the default of --budget
      maxFlaps: 2                       # per day, the default of --max-flaps (default: the current
                                        # settings' flaps per day)
      maxScaleEvents: 100               # per day, the default of --max-scale-events (default: none)

Each candidate's HPAs are plain autoscaling/v2 manifests (the scenario's HPAs with the tuned
fields set), loaded and validated here before anything runs; they are what workers receive and
what ``recommended.yaml`` holds.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pyhpa.sim.scenario import Scenario, default_hpa_loader
from pyhpa.sim.scenario_fields import FieldLocator, ScenarioError, load_yaml_documents

FIELDS = ("target", "minReplicas", "scaleUp.stabilizationWindowSeconds", "scaleUp.policies",
          "scaleDown.stabilizationWindowSeconds", "scaleDown.policies")
SECTION_KEYS = ("target", "metric", "minReplicas", "scaleUp", "scaleDown")
RULES_KEYS = ("stabilizationWindowSeconds", "policies")
BUDGET_KEYS = ("budget", "maxFlaps", "maxScaleEvents")  # the budget's fields in `tune:`
MAX_CANDIDATES = 5000
DEFAULT_REFINE = 2  # rounds of refinement around the cheapest candidate within the budget

# Defaults, for a field neither the scenario nor the command line declares (small enough that
# examples/web-diurnal.yaml tunes in well under two minutes on two cores: 60 candidates, then up to
# 6 per refinement round).
DEFAULT_UTILIZATION = (50, 60, 70, 80, 90)
DEFAULT_VALUE_FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5)
DEFAULT_MIN_REPLICAS = (1, 2, 3)
DEFAULT_SCALE_DOWN_WINDOWS = (0, 120, 300, 600)


class TuneError(ScenarioError):
    """A search space or budget that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Dimension:
    field: str  # one of FIELDS
    values: tuple[Any, ...]
    hpa: str | None = None  # "namespace/name", or None: every HPA
    metric: int = 0  # for "target": the index in spec.metrics
    where: str = ""  # where it is declared, for messages: "file:line: tune.target" or "--target"

    @property
    def column(self) -> str:
        return f"{self.hpa}:{self.field}" if self.hpa else self.field


@dataclass
class Candidate:
    name: str  # "current" or "c0001" ...
    settings: dict[str, Any]  # Dimension.column -> value
    manifests: list[dict[str, Any]]  # one autoscaling/v2 manifest per HPA of the scenario
    figures: dict[str, Any] = field(default_factory=dict)  # filled once evaluated
    on_frontier: bool = False
    combo: tuple[Any, ...] | None = None  # one value per dimension (None: the current settings)
    round: int = 0  # 0: the grid; n: the n-th refinement


# --------------------------------------------------------------------------- reading the space


def hpa_name(hpa: Any) -> str:
    return f"{hpa.metadata.namespace or 'default'}/{hpa.metadata.name}"


def read_tune_section(text: str, source: str) -> tuple[Any, FieldLocator]:
    """The ``tune:`` mapping of a scenario file's text (with line marks; None when absent)."""
    docs = load_yaml_documents(text, source)
    root = docs[0] if docs and isinstance(docs[0], Mapping) else {}
    return root.get("tune"), FieldLocator(source)


def space_from_section(section: Any, loc: FieldLocator,
                       scenario: Scenario) -> tuple[list[Dimension], dict[str, tuple[str, str]]]:
    """The dimensions a ``tune:`` section declares, and its budget fields (``budget``,
    ``maxFlaps``, ``maxScaleEvents``: text and where each stands), strictly checked."""
    if section is None:
        return [], {}
    allowed = (*SECTION_KEYS, "hpas", *BUDGET_KEYS)
    if not isinstance(section, Mapping):
        raise TuneError(f"{loc.at(section, 'tune')}: expected a mapping with {', '.join(allowed)}")
    for k in section:
        if k not in allowed:
            raise TuneError(f"{loc.at(section, 'tune', k)}: unknown field (expected one of: "
                            f"{', '.join(sorted(allowed))})")
    dims = _section_dims(section, loc, "tune", None)
    per = section.get("hpas")
    if per is not None:
        if not isinstance(per, Mapping):
            raise TuneError(f"{loc.at(section, 'tune', 'hpas')}: expected a mapping of namespace/name: fields")
        known = [hpa_name(h) for h in scenario.hpas]
        for name, sub in per.items():
            where = f"tune.hpas.{name}"
            if str(name) not in known:
                raise TuneError(f"{loc.at(per, 'tune.hpas', name)}: Not found: no HPA {name} in the scenario "
                                f"(HPAs: {', '.join(known)})")
            if not isinstance(sub, Mapping):
                raise TuneError(f"{loc.at(per, 'tune.hpas', name)}: expected a mapping of {', '.join(SECTION_KEYS)}")
            for k in sub:
                if k not in SECTION_KEYS:
                    raise TuneError(f"{loc.at(sub, where, k)}: unknown field (expected one of: {', '.join(SECTION_KEYS)})")
            dims += _section_dims(sub, loc, where, str(name))
    budget = {k: (str(section[k]), loc.at(section, "tune", k)) for k in BUDGET_KEYS if section.get(k) is not None}
    return dims, budget


def _section_dims(node: Mapping[str, Any], loc: FieldLocator, path: str, hpa: str | None) -> list[Dimension]:
    metric = node.get("metric", 0)
    if isinstance(metric, bool) or not isinstance(metric, int) or metric < 0:
        raise TuneError(f"{loc.at(node, path, 'metric')}: Invalid value: {metric!r}: must be an index >= 0 into spec.metrics")
    dims: list[Dimension] = []
    if "target" in node:
        dims.append(Dimension("target", _values(node, loc, path, "target", _target_value), hpa, metric,
                              loc.at(node, path, "target")))
    if "minReplicas" in node:
        dims.append(Dimension("minReplicas", _values(node, loc, path, "minReplicas", _int_value(0)), hpa, 0,
                              loc.at(node, path, "minReplicas")))
    for rules in ("scaleUp", "scaleDown"):
        sub = node.get(rules)
        if sub is None:
            continue
        where = f"{path}.{rules}"
        if not isinstance(sub, Mapping):
            raise TuneError(f"{loc.at(node, path, rules)}: expected a mapping with {', '.join(RULES_KEYS)}")
        for k in sub:
            if k not in RULES_KEYS:
                raise TuneError(f"{loc.at(sub, where, k)}: unknown field (expected one of: {', '.join(RULES_KEYS)})")
        if "stabilizationWindowSeconds" in sub:
            dims.append(Dimension(f"{rules}.stabilizationWindowSeconds",
                                  _values(sub, loc, where, "stabilizationWindowSeconds", _int_value(0, 3600)), hpa,
                                  0, loc.at(sub, where, "stabilizationWindowSeconds")))
        if "policies" in sub:
            raw = sub["policies"]
            if not isinstance(raw, list) or not raw:
                raise TuneError(f"{loc.at(sub, where, 'policies')}: expected a non-empty list of alternatives "
                                "(each a list of policies, or {policies, selectPolicy})")
            dims.append(Dimension(f"{rules}.policies",
                                  tuple(_policies_value(v, loc, raw, f"{where}.policies", i) for i, v in enumerate(raw)), hpa,
                                  0, loc.at(sub, where, "policies")))
    return dims


def _values(node: Mapping[str, Any], loc: FieldLocator, path: str, key: str, one: Any) -> tuple[Any, ...]:
    """A field's values: a list, a single value or a range ``{from, to, step}``."""
    raw = node[key]
    where = loc.at(node, path, key)
    if isinstance(raw, Mapping):
        for k in raw:
            if k not in ("from", "to", "step"):
                raise TuneError(f"{where}.{k}: unknown field (expected from, to, step)")
        lo, hi, step = raw.get("from"), raw.get("to"), raw.get("step", 1)
        nums = (lo, hi, step)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in nums) or step <= 0 or hi < lo:
            raise TuneError(f"{where}: Invalid value: a range needs numbers from <= to and step > 0")
        count = int(math.floor((hi - lo) / step + 1e-9)) + 1
        if count > MAX_CANDIDATES:
            raise TuneError(f"{where}: Invalid value: {count} values (at most {MAX_CANDIDATES})")
        items = [lo + i * step for i in range(count)]
        items = [int(v) if float(v).is_integer() else round(v, 9) for v in items]
    else:
        items = list(raw) if isinstance(raw, list) else [raw]
    if not items:
        raise TuneError(f"{where}: Required value: at least one value")
    out = []
    for i, v in enumerate(items):
        try:
            out.append(one(v))
        except ValueError as exc:
            raise TuneError(f"{where}" + (f"[{i}]" if isinstance(raw, list) else "") + f": Invalid value: {v!r}: {exc}") from None
    return tuple(dict.fromkeys(out))


def _int_value(low: int, high: int | None = None) -> Any:
    def one(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not float(v).is_integer():
            raise ValueError("must be a whole number")
        if v < low or (high is not None and v > high):
            raise ValueError(f"must be >= {low}" + (f" and <= {high}" if high is not None else ""))
        return int(v)
    return one


def _target_value(v: Any) -> Any:
    """A whole percent (``60``, ``"60%"``) or a quantity (``"500m"``, ``20``); checked against
    the metric's target type when applied."""
    from pyhpa.api.quantity import Quantity

    if isinstance(v, bool):
        raise ValueError("must be a number or a quantity")
    if isinstance(v, (int, float)):
        if not math.isfinite(v) or v <= 0:
            raise ValueError("must be > 0")
        return int(v) if float(v).is_integer() else v
    text = str(v).strip()
    if text.endswith("%"):
        try:
            pct = float(text[:-1])
        except ValueError:
            raise ValueError("not a percent") from None
        return f"{_int_value(1)(pct)}%"  # kept with its sign: only a Utilization target takes it
    try:
        q = Quantity.parse(text)
    except Exception as exc:
        raise ValueError(f"not a quantity: {exc}") from None
    if q.as_float() <= 0:
        raise ValueError("must be > 0")
    return text


def _policies_value(v: Any, loc: FieldLocator, node: Any, path: str, i: int) -> str:
    """One policies alternative, kept as canonical JSON text ({"policies": [...], "selectPolicy": ...})."""
    where = loc.at(node, path, i)
    if isinstance(v, list):
        v = {"policies": v}
    if not isinstance(v, Mapping) or "policies" not in v:
        raise TuneError(f"{where}: expected a list of policies or {{policies, selectPolicy}}")
    for k in v:
        if k not in ("policies", "selectPolicy"):
            raise TuneError(f"{where}.{k}: unknown field (expected policies, selectPolicy)")
    pols = v["policies"]
    if not isinstance(pols, list) or not pols:
        raise TuneError(f"{where}.policies: Required value: at least one policy")
    out_pols = []
    for j, p in enumerate(pols):
        if not isinstance(p, Mapping):
            raise TuneError(f"{where}.policies[{j}]: expected {{type, value, periodSeconds}}")
        for k in p:
            if k not in ("type", "value", "periodSeconds"):
                raise TuneError(f"{where}.policies[{j}].{k}: unknown field (expected type, value, periodSeconds)")
        out_pols.append({k: p.get(k) for k in ("type", "value", "periodSeconds")})
    return _policies_text(out_pols, v.get("selectPolicy"))


def _policies_text(policies: list[dict[str, Any]], select: Any) -> str:
    """The canonical text of a policies alternative, whether declared in ``tune:`` or by a flag."""
    out: dict[str, Any] = {"policies": policies}
    if select is not None:
        out["selectPolicy"] = select
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def parse_list(text: str, fld: str) -> tuple[Any, ...]:
    """A command-line list (``50,60,70``) of one field's values."""
    from pyhpa.api import goyaml

    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise TuneError(f"--{_flag(fld)}: Required value: a comma-separated list")
    parsed = [goyaml.go_scalar(t)[1] if not t.endswith("%") else t for t in items]
    one = {"target": _target_value, "minReplicas": _int_value(0)}.get(fld, _int_value(0, 3600))
    out = []
    for t, v in zip(items, parsed):
        try:
            out.append(one(v))
        except ValueError as exc:
            raise TuneError(f"--{_flag(fld)}: Invalid value: {t!r}: {exc}") from None
    return tuple(dict.fromkeys(out))


def parse_policies(texts: Sequence[str], fld: str) -> tuple[str, ...]:
    """A policies flag's alternatives, one per occurrence: ``Pods=4/60s,Percent=100/15s:Max`` (the
    policies as TYPE=VALUE/PERIOD, comma separated, the period a duration; then ``:`` and the
    selectPolicy, optional), checked by the API's own rules; each becomes the same alternative as in
    ``tune:``."""
    from pyhpa.api.field_errors import go_quote
    from pyhpa.api.timefmt import parse_duration
    from pyhpa.api.types import HPAScalingPolicy, HPAScalingRules
    from pyhpa.api.validation import validate_scaling_rules

    out = []
    for text in texts:
        head = f"--{_flag(fld)} {go_quote(text)}"
        body, colon, select = text.partition(":")
        items = [t.strip() for t in body.split(",")]
        at = {item: head if len(items) == 1 else f"{head}: {item}" for item in items}  # names the bad policy
        pols: list[dict[str, Any]] = []
        for item in items:
            kind, eq, rest = item.partition("=")
            value, slash, period = rest.partition("/")
            if not eq or not slash:
                raise TuneError(f"{at[item]}: expected TYPE=VALUE/PERIOD, like Pods=4/60s")
            try:
                number = int(value.strip())
            except ValueError:
                raise TuneError(f"{at[item]}: value must be a whole number") from None
            try:
                seconds = parse_duration(period.strip())
            except Exception:
                raise TuneError(f"{at[item]}: period must be a duration like 60s") from None
            if not float(seconds).is_integer():
                raise TuneError(f"{at[item]}: period must be whole seconds")
            pols.append({"type": kind.strip(), "value": number, "periodSeconds": int(seconds)})
        chosen = select.strip() if colon else None
        if chosen == "":
            raise TuneError(f"{head}: Required value: a selectPolicy after ':' (Max, Min or Disabled)")
        rules = HPAScalingRules(select_policy=chosen, policies=[
            HPAScalingPolicy(type=p["type"], value=p["value"], period_seconds=p["periodSeconds"]) for p in pols])
        for err in validate_scaling_rules(rules, "")[:1]:  # the first, on one line
            path = err.field.lstrip(".")  # "policies[j].value" or "selectPolicy"
            if path.startswith("policies["):
                j, _, sub = path[len("policies["):].partition("].")
                raise TuneError(f"{at[items[int(j)]]}: {sub}: {err.body()}")
            raise TuneError(f"{head}: {path}: {err.body()}")
        out.append(_policies_text(pols, chosen))
    return tuple(dict.fromkeys(out))


def _flag(fld: str) -> str:
    return {"target": "target", "minReplicas": "min-replicas", "scaleUp.stabilizationWindowSeconds": "scale-up-window",
            "scaleDown.stabilizationWindowSeconds": "scale-down-window", "scaleUp.policies": "scale-up-policies",
            "scaleDown.policies": "scale-down-policies"}.get(fld, fld)


def default_dimensions(scenario: Scenario) -> list[Dimension]:
    """The space when nothing declares one: target, minReplicas and the scale-down window."""
    first = scenario.hpas[0]
    kind, current = _target_of(first, 0)
    if kind == "Utilization":
        targets: tuple[Any, ...] = DEFAULT_UTILIZATION
    else:
        targets = tuple(_quantity_text(current * f) for f in DEFAULT_VALUE_FACTORS)
    top = min(h.spec.max_replicas for h in scenario.hpas)
    mins = tuple(m for m in DEFAULT_MIN_REPLICAS if m <= top)
    return [Dimension("target", targets), Dimension("minReplicas", mins),
            Dimension("scaleDown.stabilizationWindowSeconds", DEFAULT_SCALE_DOWN_WINDOWS)]


def _quantity_text(v: float) -> str:
    milli = round(v * 1000)
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def merge_space(section_dims: list[Dimension], cli: Mapping[str, tuple[Any, ...]], defaults: list[Dimension]) -> list[Dimension]:
    """The run's dimensions: the scenario's, a command-line list replacing a field's (global and per
    HPA), and the defaults when neither declares anything."""
    if not section_dims and not cli:
        return defaults
    dims = [d for d in section_dims if d.field not in cli]
    metric = next((d.metric for d in section_dims if d.field == "target" and d.hpa is None), 0)
    for fld, values in cli.items():
        dims.append(Dimension(fld, values, None, metric if fld == "target" else 0, f"--{_flag(fld)}"))
    order = {f: i for i, f in enumerate(FIELDS)}
    return sorted(dims, key=lambda d: (d.hpa is not None, d.hpa or "", order[d.field]))


# --------------------------------------------------------------------------- candidates


def base_manifests(scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's HPAs as clean autoscaling/v2 manifests: metadata's name, namespace, labels
    and annotations, the spec, and the status only where the scenario gives one (the state the
    run starts from, e.g. ScaledToZero: the simulation depends on it; an API server ignores it)."""
    from pyhpa.api.codec import to_wire

    out = []
    for hpa, written in zip(scenario.hpas, scenario.hpa_manifests):
        wire = to_wire(hpa)
        meta = {k: v for k, v in (wire.get("metadata") or {}).items()
                if k in ("name", "namespace", "labels", "annotations")}
        manifest = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
                    "spec": copy.deepcopy(wire["spec"])}
        if written.get("status") and wire.get("status"):
            manifest["status"] = copy.deepcopy(wire["status"])
        out.append(manifest)
    return out


def _target_of(hpa: Any, metric: int) -> tuple[str, float]:
    metrics = hpa.spec.metrics or []
    if metric >= len(metrics):
        raise TuneError(f"tune.metric: Invalid value: {metric}: HPA {hpa_name(hpa)} has {len(metrics)} metrics")
    m = metrics[metric]
    src = next(s for s in (m.resource, m.container_resource, m.pods, m.object, m.external) if s is not None)
    t = src.target
    if t.type == "Utilization":
        return "Utilization", float(t.average_utilization)
    q = t.average_value if t.type == "AverageValue" else t.value
    return t.type, q.as_float()


def current_settings(scenario: Scenario, dims: Sequence[Dimension]) -> dict[str, Any]:
    """The scenario's own value of each dimension (the effective one: an unset scale-down window
    is the controller's --horizontal-pod-autoscaler-downscale-stabilization)."""
    out: dict[str, Any] = {}
    own = {(d.hpa, d.field) for d in dims if d.hpa is not None}  # per-HPA fields replace the global ones
    for d in dims:
        values = []
        for hpa in scenario.hpas:
            if d.hpa not in (None, hpa_name(hpa)) or (d.hpa is None and (hpa_name(hpa), d.field) in own):
                continue
            values.append(_current_value(scenario, hpa, d))
        out[d.column] = "|".join(dict.fromkeys(str(v) for v in values))
    return out


def _current_value(scenario: Scenario, hpa: Any, d: Dimension) -> Any:
    spec = hpa.spec
    if d.field == "target":
        kind, v = _target_of(hpa, d.metric)
        return int(v) if kind == "Utilization" else _quantity_text(v)
    if d.field == "minReplicas":
        return spec.min_replicas if spec.min_replicas is not None else 1
    rules_name, what = d.field.split(".")
    rules = getattr(spec.behavior, "scale_up" if rules_name == "scaleUp" else "scale_down", None) if spec.behavior else None
    if what == "stabilizationWindowSeconds":
        if rules is not None and rules.stabilization_window_seconds is not None:
            return rules.stabilization_window_seconds
        return 0 if rules_name == "scaleUp" else int(scenario.config.downscale_stabilization)
    from pyhpa.api.codec import to_wire

    return json.dumps(to_wire(rules) if rules is not None else None, sort_keys=True, separators=(",", ":"))


def apply_setting(manifest: dict[str, Any], d: Dimension, value: Any) -> None:
    spec = manifest["spec"]
    if d.field == "target":
        metrics = spec.get("metrics") or []
        if d.metric >= len(metrics):
            raise TuneError(f"{d.where or 'tune.metric'}: Invalid value: metric {d.metric}: HPA "
                            f"{manifest['metadata'].get('name')} has {len(metrics)} metrics")
        m = metrics[d.metric]
        src = next(v for k, v in m.items() if k != "type" and isinstance(v, dict))
        t = src["target"]
        if t["type"] == "Utilization":
            if isinstance(value, str) and not value.endswith("%"):
                raise TuneError(f"{d.where}: Invalid value: {value!r}: the target is a Utilization (a whole percent)")
            pct = float(str(value).rstrip("%"))
            if not pct.is_integer():
                raise TuneError(f"{d.where}: Invalid value: {value!r}: a Utilization target is a whole percent")
            t["averageUtilization"] = int(pct)
        else:
            if isinstance(value, str) and value.endswith("%"):
                raise TuneError(f"{d.where}: Invalid value: {value!r}: the target is an {t['type']} (a quantity)")
            t["averageValue" if t["type"] == "AverageValue" else "value"] = str(value)
        return
    if d.field == "minReplicas":
        spec["minReplicas"] = value
        return
    rules_name, what = d.field.split(".")
    rules = spec.setdefault("behavior", {}).setdefault(rules_name, {})
    if what == "stabilizationWindowSeconds":
        rules["stabilizationWindowSeconds"] = value
    else:
        alt = json.loads(value)
        rules["policies"] = alt["policies"]
        rules.pop("selectPolicy", None)
        if "selectPolicy" in alt:
            rules["selectPolicy"] = alt["selectPolicy"]


def candidates(scenario: Scenario, dims: Sequence[Dimension]) -> list[Candidate]:
    """The current settings (first, named ``current``) and every combination of the dimensions,
    each loaded and validated as the simulator will load it."""
    total = math.prod(len(d.values) for d in dims) if dims else 0
    if total > MAX_CANDIDATES:
        raise TuneError(f"tune: the search space has {total} candidates (at most {MAX_CANDIDATES}); "
                        "give fewer values")
    out = [Candidate("current", current_settings(scenario, dims), base_manifests(scenario))]
    for n, combo in enumerate(itertools.product(*(d.values for d in dims)) if dims else (), start=1):
        out.append(make_candidate(scenario, dims, combo, n, 0))
    return out


def make_candidate(scenario: Scenario, dims: Sequence[Dimension], combo: tuple[Any, ...], number: int,
                   round_: int) -> Candidate:
    """Candidate ``c<number>``: the scenario's HPAs with the combination's values set."""
    manifests = base_manifests(scenario)
    names = [hpa_name(h) for h in scenario.hpas]
    for d, v in zip(dims, combo):
        for name, m in zip(names, manifests):
            if d.hpa is None or d.hpa == name:
                apply_setting(m, d, v)
    for name, m in zip(names, manifests):
        check_manifest(m, scenario, name, dims, combo)
    return Candidate(f"c{number:04d}", {d.column: v for d, v in zip(dims, combo)}, manifests, combo=tuple(combo),
                     round=round_)


def refinements(dims: Sequence[Dimension], cands: Sequence[Candidate], around: Candidate) -> list[tuple[Any, ...]]:
    """New combinations next to ``around``: for each numeric dimension in turn, the midpoints
    between its value and the nearest values tried below and above (others unchanged). None when
    ``around`` is the current settings or every midpoint was tried (or falls on a whole number
    already tried)."""
    if around.combo is None:
        return []
    seen = {c.combo for c in cands if c.combo is not None}
    out: list[tuple[Any, ...]] = []
    for k, d in enumerate(dims):
        if d.field.endswith(".policies"):
            continue
        tried = sorted({c.combo[k] for c in cands if c.combo is not None}, key=_number)
        v = around.combo[k]
        at = tried.index(v)
        for other in (tried[at - 1] if at > 0 else None, tried[at + 1] if at + 1 < len(tried) else None):
            mid = None if other is None else _midpoint(v, other)
            if mid is None:
                continue
            combo = around.combo[:k] + (mid,) + around.combo[k + 1:]
            if combo not in seen:
                seen.add(combo)
                out.append(combo)
    return out


def _number(v: Any) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    text = str(v)
    if text.endswith("%"):
        return float(text[:-1])
    from pyhpa.api.quantity import Quantity

    return Quantity.parse(text).as_float()


def _midpoint(a: Any, b: Any) -> Any:
    """The value halfway between two of a dimension's values, in their kind (whole numbers stay
    whole; None when none lies between)."""
    lo, hi = sorted((_number(a), _number(b)))
    if isinstance(a, int) and isinstance(b, int):
        mid = int((lo + hi) // 2)
        return mid if lo < mid < hi else None
    if isinstance(a, str) and a.endswith("%"):
        mid = int((lo + hi) // 2)
        return f"{mid}%" if lo < mid < hi else None
    text = _quantity_text((lo + hi) / 2)
    return text if lo < _number(text) < hi else None


# Which tuned field a validation error's field path (spec.minReplicas, ...) comes from.
_SPEC_FIELDS = (("spec.minReplicas", "minReplicas"), ("spec.maxReplicas", "minReplicas"), ("spec.metrics", "target"),
                ("spec.behavior.scaleUp.stabilizationWindowSeconds", "scaleUp.stabilizationWindowSeconds"),
                ("spec.behavior.scaleDown.stabilizationWindowSeconds", "scaleDown.stabilizationWindowSeconds"),
                ("spec.behavior.scaleUp", "scaleUp.policies"), ("spec.behavior.scaleDown", "scaleDown.policies"))


def check_manifest(manifest: dict[str, Any], scenario: Scenario, name: str, dims: Sequence[Dimension],
                   combo: Sequence[Any]) -> Any:
    """Load a candidate's HPA as the simulator will; an invalid one is an error naming the tuned
    field that made it so (where declared), the value and the HPA."""
    from pyhpa.sim.scenario import HpaFieldError

    settings = dict(zip((d.column for d in dims), combo))
    try:
        return default_hpa_loader(manifest, f"HPA {name}", scenario.config.gates)
    except HpaFieldError as exc:
        fld = next((f for prefix, f in _SPEC_FIELDS if (exc.field or "").startswith(prefix)), None)
        if manifest["spec"].get("minReplicas") == 0 and "zero" in exc.detail:
            fld = "minReplicas"  # scaling to zero refused (no Object/External metric, or the gate off)
        for d, v in zip(dims, combo):
            if d.field == fld and d.hpa in (None, name):
                raise TuneError(f"{d.where}: Invalid value: {v!r} for HPA {name}: {exc.detail}") from None
        raise TuneError(f"tune: HPA {name} with {_settings_text(settings)}: {exc.detail}") from None
    except ScenarioError as exc:
        raise TuneError(f"tune: HPA {name} with {_settings_text(settings)}: {exc}") from None


def _settings_text(settings: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())
