"""UpdateFeatures (key 57), versions 0-2.

Behavior:
- As Kafka's controller (FeatureControlManager): every update is checked against the supported
  ranges and the finalized levels (trafka/broker/metadata/features.py); the first failing one is the
  answer's error (INVALID_UPDATE_VERSION and Kafka's message) and nothing changes; otherwise all
  are applied together, the epoch goes up by one, and the levels are on disk before the answer.
  validate_only (v1+) checks without applying.
- A level below the finalized one needs a downgrade type (v0: allow_downgrade = safe
  downgrade); metadata.version is never downgraded (Kafka 4.x refuses both kinds); a level
  <= 0 removes a feature (not metadata.version). transaction.version goes from 0 to 2 (2 is
  the default); lowering it changes what new Java producers use, not open transactions.
- v0-1 list one result per feature on success (none on failure); v2 answers with the top-level
  error only. A feature named twice is INVALID_REQUEST.
- Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED), as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.metadata.features import SAFE_DOWNGRADE, UPGRADE, FeatureUpdate
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_UPGRADE_TYPE = 1


def _answer(error: ErrorCode, message: str | None, features: list[str]) -> dict:
    results = [{"feature": f, "error_code": ErrorCode.NONE, "error_message": None} for f in features] if not error else []
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "results": results}


@routes.handles(57, min_version=0, max_version=2)
async def handle(ctx, request):
    updates = [
        FeatureUpdate(
            u.feature,
            u.max_version_level,
            u.upgrade_type if ctx.version >= FIRST_VERSION_WITH_UPGRADE_TYPE else (SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE),
        )
        for u in request.feature_updates
    ]
    names = [u.feature for u in updates]
    if not authorize(ctx, Op.ALTER, CLUSTER):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None, names)
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        return _answer(ErrorCode.INVALID_REQUEST, f"Feature {duplicate} appears more than once in the request.", names)
    features = ctx.broker.features
    for update in updates:
        error, message = features.check(update)
        if error:
            return _answer(error, message, names)
    if updates and not request.validate_only:
        features.apply(updates)
    return _answer(ErrorCode.NONE, None, names)
