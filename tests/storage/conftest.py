import pytest

from trafka.storage import LogConfig, PartitionLog


@pytest.fixture
def open_log(tmp_path, clock):
    """open_log(**config) -> PartitionLog in tmp_path/t-0; reopen by calling again."""
    opened = []

    def open_(directory=None, **config):
        configs = {k.replace("_", "."): str(v) for k, v in config.items()}
        partition_log = PartitionLog(directory or tmp_path / "t-0", LogConfig.of(configs), clock=clock)
        opened.append(partition_log)
        return partition_log

    yield open_
    for partition_log in opened:
        if not partition_log._closed:
            partition_log.close()

