"""Producer ids handed out by InitProducerId, never reused across restarts.

Ids are reserved in blocks: the file holds the first id of the next block, so a restart
skips whatever was left of the last block instead of handing an id out twice.
"""

from __future__ import annotations

from pathlib import Path

from trafka.storage.errors import StorageError
from trafka.storage.files import atomic_write

BLOCK_SIZE = 1000


class ProducerIdManager:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._next = self._block_end = self._read()

    def _read(self) -> int:
        try:
            return int(self.path.read_text().strip())
        except FileNotFoundError:
            return 0
        except ValueError:
            # Handing out ids again could make a new producer's batches look like duplicates.
            raise StorageError(
                f"{self.path} is corrupt: it must hold the next free producer id; "
                "put a number above every producer id in the logs there (trafka dump-log shows them)"
            ) from None

    def _reserve_block(self) -> None:
        end = self._next + BLOCK_SIZE
        atomic_write(self.path, f"{end}\n")
        self._block_end = end

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._reserve_block()
        producer_id = self._next
        self._next += 1
        return producer_id
