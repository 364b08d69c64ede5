"""Producer ids handed out by InitProducerId, never reused across restarts.

Ids are reserved in blocks: a ProducerIdsRecord in the metadata log (trafka/broker/metadata/
image.py) holds the first id of the next block, written and fsynced before any id of the new
block is handed out, so a restart skips whatever was left of the last block instead of handing
an id out twice (Kafka's ProducerIdControlManager).
"""

from __future__ import annotations

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import MetadataRecord

BLOCK_SIZE = 1000


class ProducerIdManager:
    def __init__(self, metadata, node_id: int = -1):
        """`metadata`: the broker's ClusterMetadata (ClusterMetadata.of for the other forms)."""
        self.metadata = ClusterMetadata.of(metadata)
        self.node_id = node_id
        self._block_end = 0
        self.metadata.register(["ProducerIdsRecord"], self._replay)
        self._next = self._block_end

    def _replay(self, record: MetadataRecord) -> None:
        self._block_end = int(record.fields["next_producer_id"])

    def _reserve_block(self) -> None:
        self.metadata.write([MetadataRecord("ProducerIdsRecord", {
            "broker_id": self.node_id, "broker_epoch": -1, "next_producer_id": self._next + BLOCK_SIZE})])

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._reserve_block()
        producer_id = self._next
        self._next += 1
        return producer_id
