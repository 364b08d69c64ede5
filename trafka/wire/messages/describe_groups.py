"""DescribeGroups (key 15): state and members of classic groups; v0-6 (v6 answers an unknown
group, or one of the consumer protocol, with GROUP_ID_NOT_FOUND and an error message; KIP-1043)."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, BYTES, INT16, INT32, STRING

NO_AUTHORIZED_OPERATIONS = -(2**31)

REQUEST = Message(
    "DescribeGroupsRequest",
    versions="0-6",
    flexible="5+",
    fields=[
        Field("groups", Array(STRING)),
        Field("include_authorized_operations", BOOL, "3+"),
    ],
)

RESPONSE = Message(
    "DescribeGroupsResponse",
    versions="0-6",
    flexible="5+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "groups",
            Array([
                Field("error_code", INT16),
                Field("error_message", STRING, "6+", nullable="6+", default=None),
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("protocol_type", STRING),
                Field("protocol_data", STRING),
                Field(
                    "members",
                    Array([
                        Field("member_id", STRING),
                        Field("group_instance_id", STRING, "4+", nullable="4+"),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("member_metadata", BYTES),
                        Field("member_assignment", BYTES),
                    ]),
                ),
                Field("authorized_operations", INT32, "3+", default=NO_AUTHORIZED_OPERATIONS),
            ]),
        ),
    ],
)

API = Api(15, "DescribeGroups", REQUEST, RESPONSE)
