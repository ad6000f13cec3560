"""kombu's Redis transport with one mend: a worker survives losing its broker while it holds
messages.

When the connection drops, Celery closes the channel, and kombu's Redis channel then puts the
messages the worker holds (running tasks with late acks, tasks waiting for their countdown)
back in their queues through the connection that is gone; a task that finishes after the
reconnect acknowledges its message on that old channel too. Both fail with `AttributeError:
'NoneType' object has no attribute 'hostname'`, which Celery treats as unrecoverable: the
worker exited and waited for its supervisor. Neither is needed: the held messages stay in
Redis's set of unacknowledged messages and come back after the visibility timeout (a stage
run twice finds its work done), and if the broker lost them, the reaper sends their versions
again. So on a channel whose connection is gone, the close ends there and an acknowledgement
is skipped, and the worker goes on with its new connection.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis

from shared.log import get_logger

log = get_logger(__name__)
COMES_BACK = "Redis gives it back after the visibility timeout"


class Channel(kombu_redis.Channel):
    def _connection_gone(self) -> bool:
        return getattr(self.connection, "client", None) is None

    def close(self) -> None:
        try:
            super().close()
        except AttributeError:
            if not self._connection_gone():
                raise  # not the lost-connection case: a real bug, let it show
            log.warning(
                f"broker lost while this worker held messages: {COMES_BACK} (the reaper "
                "resends what a broker that lost its data lost)"
            )

    def _answerable(self) -> bool:
        """False (said in the log) when the message came on a connection since lost: an
        acknowledgement or rejection through it would fail, and Redis returns it anyway."""
        if self._connection_gone():
            log.warning(f"a message came on a broker connection since lost: {COMES_BACK}")
            return False
        return True

    def basic_ack(self, delivery_tag: Any, multiple: bool = False) -> None:
        if self._answerable():
            super().basic_ack(delivery_tag, multiple)

    def basic_reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        if self._answerable():
            super().basic_reject(delivery_tag, requeue)


class Transport(kombu_redis.Transport):
    Channel = Channel
