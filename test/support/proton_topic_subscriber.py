#!/usr/bin/python3
"""Qpid Proton (an independent AMQP 1.0 implementation) as a topic subscriber of a broker under test.

Usage: proton_topic_subscriber.py URL TOPIC COUNT [SELECTOR]
Attaches a receiver to TOPIC with the source capability `topic` (and, when given, a JMS selector
filter), a durable subscription (durable = unsettled-state, expiry-policy never), prints
"attached" once the broker answered, receives COUNT messages, accepts them, and prints one JSON
line: {"received": [{"id": ..., "body": ...}, ...], "capabilities": [...], "filtered": bool}.
"""
import json
import sys

from proton import Array, Data, Terminus, symbol
from proton.reactor import ReceiverOption, Selector
from proton.utils import BlockingConnection


class TopicSubscription(ReceiverOption):
    """The terminus capability `topic` on our source, durable like a JMS durable subscriber."""

    def apply(self, receiver):
        capabilities = receiver.source.capabilities
        capabilities.put_array(False, Data.SYMBOL)
        capabilities.enter()
        capabilities.put_symbol(symbol("topic"))
        capabilities.exit()
        receiver.source.durability = Terminus.DELIVERIES
        receiver.source.expiry_policy = Terminus.EXPIRE_NEVER


def value_of(data):
    """The value a terminus field holds (None when empty)."""
    data.rewind()
    if data.next() is None:
        return None
    return data.get_object()


def main():
    url, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    selector = sys.argv[4] if len(sys.argv) > 4 else None
    conn = BlockingConnection(url, timeout=30, allowed_mechs="ANONYMOUS PLAIN")
    try:
        options = [TopicSubscription()]
        if selector is not None:
            options.append(Selector(selector))
        receiver = conn.create_receiver(topic, credit=10, name="proton-sub", options=options)
        remote = receiver.link.remote_source
        caps = value_of(remote.capabilities)
        capabilities = [str(c) for c in (caps.elements if isinstance(caps, Array) else [caps] if caps else [])]
        filtered = value_of(remote.filter) is not None
        print("attached", flush=True)
        received = []
        for _ in range(count):
            msg = receiver.receive(timeout=30)
            received.append({"id": msg.id, "body": msg.body})
            receiver.accept()
        print(json.dumps({"received": received, "capabilities": capabilities, "filtered": filtered}))
    finally:
        conn.close()


if __name__ == "__main__":
    main()
