"""While a KEP-5679 fallback decides, what is said names the fallback and the failing metric
(pyhpa/controller/fallback.py), not "above target" from a metric that has no value."""

from __future__ import annotations

from datetime import timedelta

from pyhpa.api.types import (ExternalMetricFallback, ExternalMetricStatus, HorizontalPodAutoscalerStatus,
                             MetricIdentifier, MetricStatus, MetricValueStatus)
from pyhpa.controller.fallback import FallbackPass
from pyhpa.engine.calculator import Tolerances
from pyhpa.engine.metrics import MetricContext, MetricFetch, combine

from .builders import CONFIG, NOW, external_metric, hpa


def _queue(replicas: int, strategy: str | None = None):
    spec = external_metric("queue_depth", average="30")
    spec.external.fallback = ExternalMetricFallback(replicas=replicas, failure_duration_seconds=180, strategy=strategy)
    return spec


def _failing_since(seconds: float) -> HorizontalPodAutoscalerStatus:
    return HorizontalPodAutoscalerStatus(desired_replicas=4, current_metrics=[MetricStatus(
        type="External", external=ExternalMetricStatus(
            metric=MetricIdentifier(name="queue_depth"), current=MetricValueStatus(), fallback_status="Normal",
            first_failure_time=NOW - timedelta(seconds=seconds)))])


def _combine(specs, status, current=4):
    obj = hpa(specs, status=status)
    ctx = MetricContext(namespace="ns", spec_replicas=current, status_replicas=current, pods=[],
                        tolerances=Tolerances(), config=CONFIG, now=NOW)
    fallback = FallbackPass(obj, NOW, current)
    return combine(specs, [MetricFetch(error="no metrics returned")] * len(specs), ctx, fallback.adjust)


def test_the_fallbacks_proposal_says_it_is_the_fallback():
    out = _combine([_queue(5)], _failing_since(200))
    assert out.replicas == 5 and out.by_fallback
    assert out.name == "external metric queue_depth has failed for 3m0s: fallback 5 replicas"
    assert out.condition.reason == "ValidMetricFound"
    assert out.condition.message == ("the HPA is using a fallback for its replica count: "
                                     "external metric queue_depth has failed for 3m0s: fallback 5 replicas")
    assert "(nil)" not in out.condition.message


def test_the_strategy_is_named_and_the_text_does_not_change_while_failing():
    late = _combine([_queue(2, "UseMax")], _failing_since(900))
    assert late.name == ("external metric queue_depth has failed for 3m0s: fallback 4 replicas "
                         "(UseMax of current 4 and fallback.replicas 2)")
    assert _combine([_queue(2, "UseMax")], _failing_since(181)).condition == late.condition


def test_before_the_duration_the_metric_fails_as_without_a_fallback():
    out = _combine([_queue(5)], _failing_since(60))
    assert out.replicas == -1 and not out.by_fallback
    assert out.condition.status == "False"


def test_a_metric_that_answers_is_not_a_fallback():
    ctx = MetricContext(namespace="ns", spec_replicas=4, status_replicas=4, pods=[], tolerances=Tolerances(),
                        config=CONFIG, now=NOW)
    obj = hpa([_queue(5)], status=_failing_since(900))
    out = combine([_queue(5)], [MetricFetch(values=[240000], timestamp=NOW)], ctx, FallbackPass(obj, NOW, 4).adjust)
    assert out.replicas == 8 and not out.by_fallback  # 240 over 4 pods vs 30 each
    assert out.name == "external metric queue_depth(nil)"
