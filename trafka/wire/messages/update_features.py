"""UpdateFeatures (key 57): change the cluster's finalized feature levels (KIP-584); v0-2.

v0 says whether a downgrade is allowed; v1 replaces that with an upgrade type (1 upgrade, 2 safe
downgrade, 3 unsafe downgrade) and adds validate_only; v2 answers with the top-level error only.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, STRING

REQUEST = Message(
    "UpdateFeaturesRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field(
            "feature_updates",
            Array([
                Field("feature", STRING),
                Field("max_version_level", INT16),
                Field("allow_downgrade", BOOL, "0"),
                Field("upgrade_type", INT8, "1+", default=1),
            ]),
        ),
        Field("validate_only", BOOL, "1+", default=False),
    ],
)

RESPONSE = Message(
    "UpdateFeaturesResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field(
            "results",
            Array([
                Field("feature", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
            ]),
            "0-1",
        ),
    ],
)

API = Api(57, "UpdateFeatures", REQUEST, RESPONSE)
