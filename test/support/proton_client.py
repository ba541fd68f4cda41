#!/usr/bin/python3
"""Qpid Proton (an independent AMQP 1.0 implementation) as a client of a broker under test.

Usage: proton_client.py URL QUEUE COUNT
Sends COUNT messages of mixed body types (string, binary, map, list, int) with message ids and
application properties to QUEUE, receives COUNT messages back, accepts them, and prints one JSON
line: {"sent": N, "received": [{"id": ..., "body": ..., "props": ...}, ...]}.
"""
import json
import sys

from proton import Message
from proton.utils import BlockingConnection


def body_for(i):
    kind = i % 5
    if kind == 0:
        return "text-%d" % i
    if kind == 1:
        return memoryview(("bin-%d" % i).encode())
    if kind == 2:
        return {"n": i, "s": "map-%d" % i}
    if kind == 3:
        return ["list", i]
    return i


def plain(v):
    if isinstance(v, (bytes, memoryview)):
        return {"binary": bytes(v).decode()}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def main():
    url, queue, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    conn = BlockingConnection(url, timeout=30, allowed_mechs="ANONYMOUS PLAIN")
    try:
        sender = conn.create_sender(queue)
        for i in range(count):
            body = body_for(i)
            if isinstance(body, memoryview):
                body = bytes(body)
            sender.send(Message(id="proton-%d" % i, body=body, properties={"i": i}, durable=True))
        receiver = conn.create_receiver(queue, credit=10)
        received = []
        for _ in range(count):
            msg = receiver.receive(timeout=30)
            received.append({"id": msg.id, "body": plain(msg.body), "props": plain(msg.properties)})
            receiver.accept()
        print(json.dumps({"sent": count, "received": received}))
    finally:
        conn.close()


if __name__ == "__main__":
    main()
