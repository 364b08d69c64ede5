"""The transaction coordinator: transactional ids, their producers and transactions, kept in
`__transaction_state`."""

from trafka.broker.coordinators.transaction.coordinator import TransactionCoordinator

__all__ = ["TransactionCoordinator"]
