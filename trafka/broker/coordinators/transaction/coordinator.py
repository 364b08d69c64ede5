"""The transaction coordinator: Kafka's TransactionCoordinator, scaled to one broker.

One `TransactionMetadata` per transactional id, moving through Kafka's states:

    Empty -> Ongoing (AddPartitionsToTxn / AddOffsetsToTxn)
    Ongoing -> PrepareCommit | PrepareAbort (EndTxn, or a timeout) -> CompleteCommit | CompleteAbort
    Complete* -> Ongoing (the next transaction) ; Empty/Complete* -> Dead (transactional.id.expiration.ms)

The state lives on the coordinator runtime (trafka/broker/coordinators/runtime): one `TransactionShard` per
partition of `__transaction_state`. Every transition is written first and applied to the
transaction's metadata only once its record is in the log; a failed write changes nothing and
answers COORDINATOR_NOT_AVAILABLE. Completing a transaction writes PrepareCommit/PrepareAbort,
then a COMMIT/ABORT marker to every partition of the transaction (for `__consumer_offsets`
partitions through the group coordinator, which then makes the transaction's offsets
visible), then CompleteCommit/CompleteAbort. On one broker the markers are local appends, so
the whole sequence runs without yielding to the event loop. A marker that cannot be written
leaves the transaction in PrepareCommit/PrepareAbort (the decision is durable, so EndTxn is
answered NONE, as Kafka answers once the Prepare* record is written); the markers still owed
are retried by the timer task (`abort_timed_out`) until they are written, and the producer's
next request gets CONCURRENT_TRANSACTIONS meanwhile, as Kafka's marker channel retries
forever. Start-up finishes the markers of every transaction it finds in PrepareCommit /
PrepareAbort (Kafka's TransactionMarkerChannelManager after a coordinator fail-over).

Transaction version 2 (KIP-890 part 2), for clients that see `transaction.version` 2 finalized
(Java 4.x): a transactional Produce v12+ or a TxnOffsetCommit v5 adds its partition to the
transaction itself (no AddPartitionsToTxn / AddOffsetsToTxn), and every EndTxn v5 bumps the
producer epoch: PrepareCommit/PrepareAbort carries epoch + 1, the markers are written with it,
and the answer hands the new epoch to the producer. When the epoch is exhausted (32766) the
commit/abort also takes a new producer id (NextProducerId), which replaces the old one at
Complete* with epoch 0 (PreviousProducerId keeps the old one, so a retried EndTxn is still
recognised). A retried EndTxn v5 after completion (the epoch before the bump) is answered NONE
with the current id and epoch; the same epoch as the current one is the next transaction's
EndTxn (an abort of nothing is allowed, a commit of nothing is INVALID_TXN_STATE). Each
transaction records the version it was begun with (ClientTransactionVersion) and is finished
under that version's rules: an EndTxn v5 for a transaction begun with AddPartitionsToTxn does
not bump. A timed-out or fenced version 2 transaction is aborted with two bumps (the fence,
then the abort's own), as in Kafka.

Time comes from the injected clock. `abort_timed_out(now)` aborts (with an epoch bump, so the
old producer is fenced) every Ongoing transaction older than its timeout, and
`expire_transactional_ids(now)` forgets ids idle for transactional.id.expiration.ms; the
broker's timer tasks call them every transaction.abort.timed.out.transaction.cleanup.interval.ms
and transaction.remove.expired.transaction.cleanup.interval.ms, and tests on a manual clock
call them directly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC
from trafka.broker.metadata.features import TRANSACTION_VERSION
from trafka.broker.coordinators.runtime.internal_topic import InternalTopic
from trafka.broker.coordinators.runtime.records import CoordinatorRecord, CoordinatorResult
from trafka.broker.coordinators.runtime.runtime import CoordinatorRuntime, CoordinatorWriteError, ShardMap
from trafka.broker.coordinators.transaction import formats
from trafka.broker.coordinators.transaction.formats import TxnRecord, TxnState
from trafka.broker.coordinators.transaction.state_topic import TRANSACTION_STATE_TOPIC, topic_configs
from trafka.storage import errors as storage_errors
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.transaction")

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_EPOCH = 32766  # Short.MaxValue - 1: the epoch after which a new producer id is handed out
SHORT_MAX = 32767  # the epoch an exhausting version 2 commit/abort writes its markers with
TV_0, TV_2 = 0, 2  # the client transaction versions a transaction records (1 is never a client's)
COORDINATOR_EPOCH = 0  # one broker, never a fail-over: the state partitions' leader epoch

EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE = TxnState


@dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = EMPTY
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    client_version: int = TV_0
    # Partitions whose marker this completion already wrote (not persisted: after a restart
    # every marker is written again, as after a Kafka coordinator fail-over).
    markers_written: set[tuple[str, int]] = field(default_factory=set)

    @property
    def bumps_epoch(self) -> bool:
        """Whether this transaction ends under version 2 rules."""
        return self.client_version >= TV_2

    def record(self) -> TxnRecord:
        return TxnRecord(
            self.producer_id, self.producer_epoch, self.timeout_ms, self.state,
            tuple(sorted(self.partitions)), self.last_update_ms, self.start_ms,
            self.previous_producer_id, self.next_producer_id, self.client_version,
        )


class TransactionShard:
    """The transactional ids of one `__transaction_state` partition, as its records leave them."""

    def __init__(self) -> None:
        self.transactions: dict[str, TransactionMetadata] = {}

    def replay(self, key: bytes, value: bytes | None, offset: int = -1) -> None:
        transactional_id = formats.parse_txn_key(key)
        if value is None:
            self.transactions.pop(transactional_id, None)
            return
        record = formats.parse_txn_value(value)
        self.transactions[transactional_id] = TransactionMetadata(
            transactional_id, record.producer_id, record.producer_epoch, record.timeout_ms, record.state,
            partitions=set(record.partitions), start_ms=record.start_ms, last_update_ms=record.last_update_ms,
            previous_producer_id=record.previous_producer_id, next_producer_id=record.next_producer_id,
            client_version=record.client_version,
        )


class TransactionCoordinator:
    def __init__(self, logs, config, clock, producer_ids, group_coordinator, features, cluster):
        """`cluster`: where each partition's leader is (`cluster.leader_node`, None while it has
        none), to which the markers of a transaction's partitions are written."""
        self.logs = logs
        self.cluster = cluster
        self.features = features  # FeatureLevels: transaction.version >= 1 writes flexible records
        self.config = config
        self.clock = clock
        self.producer_ids = producer_ids
        self.group_coordinator = group_coordinator
        self.state_topic = InternalTopic(logs, TRANSACTION_STATE_TOPIC, config["transaction.state.log.num.partitions"],
                                         topic_configs(config["transaction.state.log.segment.bytes"]), clock)
        self.runtime: CoordinatorRuntime[TransactionShard] = CoordinatorRuntime(self.state_topic, lambda p: TransactionShard())
        self.transactions = ShardMap(self.runtime, "transactions")
        # A shard loaded (a restart, a coordinator that moved here) finishes what its last
        # leader decided and did not finish.
        self.runtime.on_loaded = self.finish_unfinished

    def _now(self) -> int:
        return self.clock.timer_ms()

    # --- start-up -------------------------------------------------------------------------

    def finish_unfinished(self, partition: int) -> None:
        """Complete the commits and aborts of a shard just loaded that were decided but not
        finished when it was last loaded elsewhere (a restart, or a coordinator that moved)."""
        shard = self.runtime.shards[partition]
        unfinished = [t for t in shard.transactions.values() if t.state in (PREPARE_COMMIT, PREPARE_ABORT)]
        for txn in unfinished:
            log.info("transaction %s: finishing %s after restart", txn.transactional_id, txn.state.kafka_name)
            self._complete(txn, txn.state is PREPARE_COMMIT)
        for txn in [t for t in shard.transactions.values() if t.state is PREPARE_EPOCH_FENCE]:
            self._complete(txn, False)

    def log_loaded(self) -> None:
        log.info("loaded %d transactional ids from %s", len(self.transactions), TRANSACTION_STATE_TOPIC)

    # --- writing state --------------------------------------------------------------------

    def _flexible_records(self) -> bool:
        return self.features.level(TRANSACTION_VERSION) >= 1

    def _transition(self, txn: TransactionMetadata, *, install: bool = False, **changes) -> ErrorCode:
        """Write the transaction's metadata as `changes` make it, then apply them to `txn`
        (and, with `install`, put `txn` in the map); a failed write changes nothing."""
        # Kafka's prevProducerId: the id before this transition.
        changes.update(previous_producer_id=txn.producer_id, last_update_ms=self._now())
        record = replace(txn, **changes).record()
        key = formats.txn_key(txn.transactional_id)

        def apply(base_offset: int) -> None:
            for name, value in changes.items():
                setattr(txn, name, value)
            if install:
                self.transactions[txn.transactional_id] = txn
        records = [CoordinatorRecord(key, formats.txn_value(record, self._flexible_records()))]
        try:
            self.runtime.write(self.state_topic.partition_for(txn.transactional_id),
                               lambda shard: CoordinatorResult(records, None, apply))
        except CoordinatorWriteError as exc:
            log.error("transaction %s: cannot write its state: %s", txn.transactional_id, exc.cause)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return ErrorCode.NONE

    # --- InitProducerId -------------------------------------------------------------------

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
    ) -> tuple[ErrorCode, int, int]:
        """(error, producer id, epoch): Kafka's handleInitProducerId for a transactional id."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if timeout_ms <= 0 or timeout_ms > self.config["transaction.max.timeout.ms"]:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.state is DEAD:
            txn = TransactionMetadata(transactional_id, self.producer_ids.next_id(), 0, timeout_ms)
            error = self._transition(txn, install=True)
            if error:
                return error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
            return ErrorCode.NONE, txn.producer_id, txn.producer_epoch
        # The previous id at an exhausted epoch: a retry after a version 2 EndTxn handed out a
        # new id whose answer was lost (Kafka's isValidProducerId); it gets the new id below.
        rotated = producer_id == txn.previous_producer_id and producer_epoch >= MAX_EPOCH
        if producer_id != NO_PRODUCER_ID and producer_id != txn.producer_id and not rotated:
            return ErrorCode.PRODUCER_FENCED, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if producer_epoch != NO_PRODUCER_EPOCH and producer_epoch != txn.producer_epoch:
            if producer_epoch == txn.last_producer_epoch:
                # A retry whose answer was lost, or a producer whose transaction timed out:
                # it gets the current epoch without another bump (KIP-360, KIP-588).
                return ErrorCode.NONE, txn.producer_id, txn.producer_epoch
            return ErrorCode.PRODUCER_FENCED, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if txn.state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            return ErrorCode.CONCURRENT_TRANSACTIONS, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if txn.state is ONGOING:
            # A new instance of the producer: fence the old one by aborting its transaction
            # under a bumped epoch (Kafka's prepareFenceProducerEpoch), then bump once more.
            error = self._fence_and_abort(txn)
            if error:
                return error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
            if txn.state in (PREPARE_ABORT, PREPARE_EPOCH_FENCE):  # a marker failed: retry_markers finishes it
                return ErrorCode.CONCURRENT_TRANSACTIONS, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if txn.producer_epoch >= MAX_EPOCH - 1:
            changes = {"producer_id": self.producer_ids.next_id(), "producer_epoch": 0, "last_producer_epoch": NO_PRODUCER_EPOCH}
        else:
            changes = {"producer_epoch": txn.producer_epoch + 1, "last_producer_epoch": txn.producer_epoch}
        error = self._transition(txn, state=EMPTY, timeout_ms=timeout_ms, partitions=set(), start_ms=-1, **changes)
        if error:
            return error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        log.info("transaction %s: producer %d epoch %d", transactional_id, txn.producer_id, txn.producer_epoch)
        return ErrorCode.NONE, txn.producer_id, txn.producer_epoch

    def _fence_and_abort(self, txn: TransactionMetadata) -> ErrorCode:
        """Kafka's prepareFenceProducerEpoch then an abort: the epoch goes up by one (and, for a
        version 2 transaction, by one more for the abort itself, never past Short.MaxValue)."""
        bumped = min(txn.producer_epoch + 1, MAX_EPOCH if not txn.bumps_epoch else SHORT_MAX)
        error = self._transition(txn, state=PREPARE_EPOCH_FENCE, producer_epoch=bumped, last_producer_epoch=txn.producer_epoch)
        if error:
            return error
        if txn.bumps_epoch:
            aborted = min(txn.producer_epoch + 1, SHORT_MAX)
            error = self._transition(txn, state=PREPARE_ABORT, producer_epoch=aborted, last_producer_epoch=txn.producer_epoch)
            if error:
                return error
        return self._complete(txn, False)

    # --- validation shared by AddPartitions / AddOffsets / EndTxn -------------------------

    def _check_producer(self, transactional_id: str, producer_id: int, producer_epoch: int, version_fenced: bool) -> tuple[ErrorCode, TransactionMetadata | None]:
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.state is DEAD:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, None
        if txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, None
        if txn.producer_epoch != producer_epoch:
            return (ErrorCode.PRODUCER_FENCED if version_fenced else ErrorCode.INVALID_PRODUCER_EPOCH), None
        if txn.state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            return ErrorCode.CONCURRENT_TRANSACTIONS, None
        return ErrorCode.NONE, txn

    # --- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------

    def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[tuple[str, int]],
        *, version_fenced: bool = True,
    ) -> dict[tuple[str, int], ErrorCode]:
        """One error per partition: all the same, except UNKNOWN_TOPIC_OR_PARTITION for missing
        partitions, which leaves the others OPERATION_NOT_ATTEMPTED (as in Kafka)."""
        missing = [tp for tp in partitions if not self._partition_exists(*tp)]
        if missing:
            return {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in missing else ErrorCode.OPERATION_NOT_ATTEMPTED for tp in partitions}
        error, txn = self._check_producer(transactional_id, producer_id, producer_epoch, version_fenced)
        if not error:
            error = self._add(txn, set(partitions))
        return {tp: error for tp in partitions}

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str, *, version_fenced: bool = True) -> ErrorCode:
        error, txn = self._check_producer(transactional_id, producer_id, producer_epoch, version_fenced)
        if error:
            return error
        partition = self.group_coordinator.offsets_topic.partition_for(group_id)
        return self._add(txn, {(OFFSETS_TOPIC, partition)})

    def _add(self, txn: TransactionMetadata, partitions: set[tuple[str, int]], client_version: int = TV_0) -> ErrorCode:
        """Add partitions; a new transaction records the client's transaction version, an open
        one keeps the version it began with."""
        if txn.state is ONGOING and partitions <= txn.partitions:
            return ErrorCode.NONE
        if txn.state is ONGOING:
            return self._transition(txn, partitions=txn.partitions | partitions)
        return self._transition(txn, state=ONGOING, partitions=txn.partitions | partitions, start_ms=self._now(),
                                client_version=client_version)

    def _partition_exists(self, topic: str, partition: int) -> bool:
        found = self.logs.topics.get(topic)
        return found is not None and 0 <= partition < found.partitions

    # --- EndTxn ---------------------------------------------------------------------------

    def end_transaction(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, *, version_fenced: bool = True
    ) -> ErrorCode:
        error, txn = self._check_producer(transactional_id, producer_id, producer_epoch, version_fenced)
        if error:
            return error
        if txn.state is ONGOING:
            return self._end(txn, commit)
        if txn.state is (COMPLETE_COMMIT if commit else COMPLETE_ABORT):
            return ErrorCode.NONE  # a retry of the EndTxn that completed it
        return ErrorCode.INVALID_TXN_STATE

    def end_transaction_v2(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> tuple[ErrorCode, int, int]:
        """EndTxn v5 (Kafka's endTransaction for transaction version 2): (error, the producer id
        and epoch the producer uses next). A transaction begun under version 0 is finished
        under its rules, without a bump."""
        failed = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST, *failed
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.state is DEAD:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, *failed
        if txn.state is ONGOING and not txn.bumps_epoch:
            error = self.end_transaction(transactional_id, producer_id, producer_epoch, commit)
            return (error, txn.producer_id, txn.producer_epoch) if not error else (error, *failed)
        # A retry after an exhausted epoch gave the producer a new id: the old id at 32766.
        retry_on_overflow = (txn.previous_producer_id == producer_id and producer_epoch == MAX_EPOCH
                             and txn.producer_epoch == 0 and txn.previous_producer_id != txn.producer_id)
        retry_on_bump = txn.producer_id == producer_id and txn.producer_epoch == producer_epoch + 1
        if txn.state in (COMPLETE_COMMIT, COMPLETE_ABORT):
            valid_epoch = retry_on_bump or retry_on_overflow or producer_epoch == txn.producer_epoch
        elif txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
            valid_epoch = retry_on_bump
        else:
            valid_epoch = producer_epoch == txn.producer_epoch
        if txn.producer_id != producer_id and not retry_on_overflow:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, *failed
        if not valid_epoch:
            return ErrorCode.PRODUCER_FENCED, *failed
        retry = retry_on_bump or retry_on_overflow
        state = txn.state
        if state is ONGOING:
            error = self._end(txn, commit, bump=True)
        elif state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            same = state is (PREPARE_COMMIT if commit else PREPARE_ABORT)
            error = ErrorCode.CONCURRENT_TRANSACTIONS if same or state is PREPARE_EPOCH_FENCE else ErrorCode.INVALID_TXN_STATE
        elif state is COMPLETE_COMMIT and commit or state is COMPLETE_ABORT and not commit:
            # The retry of the EndTxn that completed it; the same epoch is a commit of nothing.
            error = ErrorCode.NONE if retry else (ErrorCode.INVALID_TXN_STATE if commit else self._end(txn, False, bump=True))
        elif commit:  # Empty, or the other result of a completed transaction
            error = ErrorCode.INVALID_TXN_STATE
        else:
            # Version 2 may abort with no partition added (Empty, or after a commit).
            error = ErrorCode.INVALID_TXN_STATE if retry else self._end(txn, False, bump=True)
        if error:
            return error, *failed
        return ErrorCode.NONE, txn.producer_id, txn.producer_epoch

    def _end(self, txn: TransactionMetadata, commit: bool, *, bump: bool = False) -> ErrorCode:
        changes = {"state": PREPARE_COMMIT if commit else PREPARE_ABORT}
        if bump:
            # Version 2: the markers carry epoch + 1; an exhausted epoch also takes a new id,
            # which replaces the old one once the markers are written.
            changes.update(
                producer_epoch=min(txn.producer_epoch + 1, SHORT_MAX),
                last_producer_epoch=txn.producer_epoch,
                next_producer_id=self.producer_ids.next_id() if txn.producer_epoch >= MAX_EPOCH else NO_PRODUCER_ID,
                client_version=TV_2,
            )
            if txn.state is not ONGOING:  # an abort with no partition added starts now
                changes.update(start_ms=self._now(), partitions=set())
        error = self._transition(txn, **changes)
        if error:
            return error
        return self._complete(txn, commit)

    def _complete(self, txn: TransactionMetadata, commit: bool) -> ErrorCode:
        """Write the markers, then CompleteCommit/CompleteAbort (Kafka's marker channel). A
        marker that cannot be written leaves the transaction in its Prepare* state, to be
        finished by `retry_markers`; the decision is durable, so the answer is NONE."""
        for topic, partition in sorted(txn.partitions - txn.markers_written):
            if not self._write_marker(txn, topic, partition, commit):
                return ErrorCode.NONE
            txn.markers_written.add((topic, partition))
        txn.markers_written.clear()
        changes = {"state": COMPLETE_COMMIT if commit else COMPLETE_ABORT, "partitions": set(), "next_producer_id": NO_PRODUCER_ID}
        if txn.bumps_epoch and txn.next_producer_id != NO_PRODUCER_ID:
            changes.update(producer_id=txn.next_producer_id, producer_epoch=0)
        error = self._transition(txn, **changes)
        if not error:
            log.info("transaction %s: %s (producer %d epoch %d next)", txn.transactional_id,
                     "committed" if commit else "aborted", txn.producer_id, txn.producer_epoch)
        return error

    def _write_marker(self, txn: TransactionMetadata, topic: str, partition: int, commit: bool) -> bool:
        """Whether the marker is written (or not needed: the partition is gone)."""
        if topic != OFFSETS_TOPIC and not self._partition_exists(topic, partition):
            log.info("transaction %s: %s-%d is gone, no marker written", txn.transactional_id, topic, partition)
            return True
        leader = self.cluster.leader_node(topic, partition)  # the marker goes to the partition's leader
        if leader is None:
            log.warning("transaction %s: %s-%d has no leader, retrying the marker later",
                        txn.transactional_id, topic, partition)
            return False
        group_coordinator, logs = leader.group_coordinator, leader.logs
        try:
            if topic == OFFSETS_TOPIC:
                group_coordinator.complete_txn(partition, txn.producer_id, txn.producer_epoch, commit, COORDINATOR_EPOCH)
            else:
                logs.log(topic, partition).append_control(txn.producer_id, txn.producer_epoch, commit, COORDINATOR_EPOCH)
                # Written once the in-sync replicas have it, as Kafka's acks=all marker append:
                # one on the leader alone would go with it, leaving the transaction open on the
                # next leader for the producer's next marker to end.
                self.cluster.replication.replicate_now(leader, topic, partition)
        except (storage_errors.StorageError, OSError, CoordinatorWriteError) as exc:
            log.error("transaction %s: cannot write the marker to %s-%d, retrying later: %s",
                      txn.transactional_id, topic, partition, exc)
            return False
        return True

    def retry_markers(self) -> list[str]:
        """Finish every transaction whose markers could not all be written (Kafka's marker
        channel retrying); the ids finished."""
        finished = []
        unfinished = (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE)  # a fence ends in an abort
        for txn in [t for t in self.transactions.values() if t.state in unfinished]:
            self._complete(txn, txn.state is PREPARE_COMMIT)
            if txn.state not in unfinished:
                finished.append(txn.transactional_id)
        return finished

    # --- Produce --------------------------------------------------------------------------

    def verify_produce(
        self, transactional_id: str, producer_id: int, producer_epoch: int, topic: str, partition: int, *, add: bool = False
    ) -> ErrorCode:
        """Kafka's transaction verification (transaction.partition.verification.enable): a
        transactional batch is accepted only for a partition of the producer's open transaction.
        With `add` (a version 2 producer: Produce v12+, TxnOffsetCommit v5) a partition not in
        the transaction is added to it instead, starting one if none is open, as Kafka's
        AddPartitionsToTxnManager asks its coordinator to."""
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.state is DEAD or txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if producer_epoch != txn.producer_epoch:  # Kafka's coordinator: PRODUCER_FENCED, which the broker turns into this
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if add and txn.state in (EMPTY, ONGOING, COMPLETE_COMMIT, COMPLETE_ABORT):
            return self._add(txn, {(topic, partition)}, TV_2)
        if add and txn.state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if txn.state is not ONGOING or (topic, partition) not in txn.partitions:
            return ErrorCode.INVALID_TXN_STATE  # Kafka's coordinator says TRANSACTION_ABORTABLE; callers map it
        return ErrorCode.NONE

    # --- timers ---------------------------------------------------------------------------

    def abort_timed_out(self, now: int) -> list[str]:
        """Abort every Ongoing transaction older than its timeout, bumping the epoch so the
        producer is fenced (Kafka's abortTimedOutTransactions). Returns the ids aborted. Markers
        that could not be written before are retried first."""
        self.retry_markers()
        aborted = []
        for txn in list(self.transactions.values()):
            if txn.state is ONGOING and txn.start_ms >= 0 and txn.start_ms + txn.timeout_ms < now:
                log.info("transaction %s: aborting after its timeout of %d ms", txn.transactional_id, txn.timeout_ms)
                if not self._fence_and_abort(txn):
                    aborted.append(txn.transactional_id)
        return aborted

    def expire_transactional_ids(self, now: int) -> list[str]:
        """Forget ids with no transaction for transactional.id.expiration.ms: a tombstone in
        `__transaction_state` (Kafka's removeExpiredTransactionalIds)."""
        expiration = self.config["transactional.id.expiration.ms"]
        expired = []
        for txn in list(self.transactions.values()):
            if txn.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) and txn.last_update_ms + expiration <= now:
                tombstone = [CoordinatorRecord(formats.txn_key(txn.transactional_id), None)]

                def apply(base_offset: int, txn=txn) -> None:
                    txn.state = DEAD
                    del self.transactions[txn.transactional_id]
                try:
                    self.runtime.write(self.state_topic.partition_for(txn.transactional_id),
                                       lambda shard: CoordinatorResult(tombstone, None, apply))
                except CoordinatorWriteError as exc:
                    log.error("transaction %s: cannot expire: %s", txn.transactional_id, exc.cause)
                    continue
                expired.append(txn.transactional_id)
                log.info("transactional id %s expired", txn.transactional_id)
        return expired

    def run_expiration_check(self) -> None:
        self.expire_transactional_ids(self._now())

    # --- admin ----------------------------------------------------------------------------

    def describe(self, transactional_id: str) -> TransactionMetadata | None:
        txn = self.transactions.get(transactional_id)
        return None if txn is None or txn.state is DEAD else txn

    def list(self, states: set[str] | None = None, producer_ids: set[int] | None = None) -> list[TransactionMetadata]:
        return [
            t for t in self.transactions.values()
            if t.state is not DEAD
            and (not states or t.state.kafka_name in states)
            and (not producer_ids or t.producer_id in producer_ids)
        ]
