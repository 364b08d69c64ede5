"""A group coordinator whose `__consumer_offsets` shard moves away answers its parked JoinGroup
and SyncGroup requests NOT_COORDINATOR at once, as Kafka's onUnloaded does, so the members find
the new coordinator instead of waiting out their rebalance timeout. A `Cluster` built in the
test, the coordinator called as the handlers call it, under `trio.run`: no sockets, no sleeps."""

from __future__ import annotations

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from trafka.broker.config import BrokerConfig
from trafka.broker.coordinators.group.classic import JoinRequest
from trafka.broker.cluster.nodes import Cluster
from trafka.wire.errors import ErrorCode

OFFSETS = "__consumer_offsets"
SETTINGS = {"cluster.brokers": 3, "offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1, "group.initial.rebalance.delay.ms": 0}
REBALANCE_MS = 60000


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path / "cluster", BrokerConfig.from_sources([f"{k}={v}" for k, v in SETTINGS.items()], []))
    yield made
    made.close()


def _join(coordinator, group: str, member_id: str = ""):
    return coordinator.join_group(JoinRequest(group, member_id, None, "client", "/127.0.0.1", 30000, REBALANCE_MS,
                                              "consumer", [("range", b"sub")], False))


async def _sync(coordinator, group: str, generation: int, member_id: str, assignments=None):
    return await coordinator.sync_group(group, generation, member_id, None, None, None, assignments or {})


class Parked:
    """Requests running as tasks, as handlers would: their answers land in `answers` by name."""

    def __init__(self, nursery):
        self.nursery, self.answers = nursery, {}

    async def start(self, name, request) -> None:
        async def run():
            self.answers[name] = await request

        self.nursery.start_soon(run)
        await wait_all_tasks_blocked()


async def _stable(coordinator, group: str) -> str:
    """A Stable group of one member; its member id."""
    joined = await _join(coordinator, group)
    assert joined.error == ErrorCode.NONE
    assert (await _sync(coordinator, group, joined.generation, joined.member_id, {joined.member_id: b"a"})).error == 0
    return joined.member_id


@pytest.mark.parametrize("how", ["leader moved", "broker stopped"])
def test_parked_joins_and_syncs_learn_not_coordinator_when_the_shard_unloads(cluster, how):
    """Group `waiting`: a newcomer's JoinGroup waits for the old member to rejoin. Group
    `syncing`: both members joined, the follower's SyncGroup waits for the leader's assignment.
    The shard of `__consumer_offsets`-0 moves: both are answered NOT_COORDINATOR at once."""
    node = cluster.leader_node(OFFSETS, 0)
    coordinator = node.group_coordinator

    async def main():
        async with trio.open_nursery() as nursery:
            parked = Parked(nursery)
            await _stable(coordinator, "waiting")
            await parked.start("newcomer", _join(coordinator, "waiting"))
            old = await _stable(coordinator, "syncing")
            await parked.start("second", _join(coordinator, "syncing"))
            rejoined = await _join(coordinator, "syncing", old)  # every member joined: generation 2
            await wait_all_tasks_blocked()
            second = parked.answers.pop("second")
            follower = second.member_id if rejoined.leader != second.member_id else old
            await parked.start("follower sync", _sync(coordinator, "syncing", rejoined.generation, follower))
            assert parked.answers == {}  # both wait

            if how == "leader moved":
                other = next(r for r in cluster.describe_partition(OFFSETS, 0)["isr"] if r != node.node_id)
                cluster.move_leader(OFFSETS, 0, other)
            else:
                cluster.stop_broker(node.node_id)
            await wait_all_tasks_blocked()
            assert parked.answers["newcomer"].error == ErrorCode.NOT_COORDINATOR
            assert parked.answers["follower sync"].error == ErrorCode.NOT_COORDINATOR
            nursery.cancel_scope.cancel()

    trio.run(main)

