"""ExpireDelegationToken (key 40): expire a delegation token (now or later); v1-2 (v2 flexible).

Declared as RenewDelegationToken is, with `expiry_time_period_ms` for the period.
"""

from trafka.wire.api import Api
from trafka.wire.messages.renew_delegation_token import token_expiry_messages

REQUEST, RESPONSE = token_expiry_messages("ExpireDelegationToken", "expiry_time_period_ms")

API = Api(40, "ExpireDelegationToken", REQUEST, RESPONSE)
