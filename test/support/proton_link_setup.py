#!/usr/bin/python3
"""Qpid Proton (an independent AMQP 1.0 implementation) checking a broker's link setup.

Usage: proton_link_setup.py URL QUEUE MODE
Prints one JSON line.

MODE attach: attaches a sender and a receiver on QUEUE and reports which termini the broker's
  answering attaches carried: {"sender": {"source": {"address": ...} or null, "target": ...},
  "receiver": ...} (our own ends are named proton-out and proton-in).
MODE browse: sends 5 messages, browses QUEUE with a receiver whose source asks for
  distribution-mode copy (Proton's Copy(), as its queue_browser example), accepting each copy,
  then consumes QUEUE with a plain receiver:
  {"mode": <the broker's distribution-mode>, "browsed": [bodies], "consumed": [bodies]}.
MODE dedup: a sender whose target lists the capability quorate:dedup sends two messages with one
  message-id (each send waits for its outcome): {"offered": [the broker's target capabilities]}.
"""
import json
import sys

from proton import Data, Message, Terminus, Timeout
from proton.reactor import Copy, LinkOption
from proton.utils import BlockingConnection


class TargetCapability(LinkOption):
    """Sets one symbol in the sender's target capabilities (Proton has no desired-capabilities API)."""

    def __init__(self, capability):
        self.capability = capability

    def apply(self, link):
        caps = link.target.capabilities
        caps.put_array(False, Data.SYMBOL)
        caps.enter()
        caps.put_symbol(self.capability)
        caps.exit()


class OwnAddress(LinkOption):
    """Names our own end of the link (a sender's source, a receiver's target)."""

    def __init__(self, address):
        self.address = address

    def apply(self, link):
        (link.source if link.is_sender else link.target).address = self.address


def terminus(t):
    """What the broker's answering attach carried: null ("not created"), or a terminus and its address."""
    return None if t.type == Terminus.UNSPECIFIED else {"address": t.address}


def termini(link):
    return {"source": terminus(link.remote_source), "target": terminus(link.remote_target)}


def symbols(data):
    out = []
    data.rewind()
    while data.next():
        if data.type() == Data.ARRAY:
            data.enter()
            while data.next():
                out.append(str(data.get_symbol()))
            data.exit()
        elif data.type() == Data.SYMBOL:
            out.append(str(data.get_symbol()))
    return out


def consume(conn, queue, count):
    """Up to COUNT messages from QUEUE, accepted (fewer when none comes for 10 s: a failed check)."""
    receiver = conn.create_receiver(queue, credit=10)
    bodies = []
    for _ in range(count):
        try:
            msg = receiver.receive(timeout=10)
        except Timeout:
            break
        bodies.append(msg.body)
        receiver.accept()
    receiver.close()
    return bodies


def main():
    url, queue, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    conn = BlockingConnection(url, timeout=30, allowed_mechs="ANONYMOUS PLAIN")
    try:
        if mode == "attach":
            sender = conn.create_sender(queue, options=OwnAddress("proton-out"))
            receiver = conn.create_receiver(queue, options=OwnAddress("proton-in"))
            out = {"sender": termini(sender.link), "receiver": termini(receiver.link)}
        elif mode == "browse":
            sender = conn.create_sender(queue)
            for i in range(5):
                sender.send(Message(id="b-%d" % i, body="m-%d" % i))
            browser = conn.create_receiver(queue, credit=10, options=Copy())
            browsed = []
            for _ in range(5):
                msg = browser.receive(timeout=30)
                browsed.append(msg.body)
                browser.accept()
            dist = browser.link.remote_source.distribution_mode
            browser.close()
            out = {
                "mode": {Terminus.DIST_MODE_COPY: "copy", Terminus.DIST_MODE_MOVE: "move"}.get(dist, "unspecified"),
                "browsed": browsed,
                "consumed": consume(conn, queue, 5),
            }
        elif mode == "dedup":
            sender = conn.create_sender(queue, options=TargetCapability("quorate:dedup"))
            for body in ("first", "again"):
                sender.send(Message(id="same-id", body=body))
            out = {"offered": symbols(sender.link.remote_target.capabilities)}
        else:
            raise SystemExit("unknown mode " + mode)
        print(json.dumps(out))
    finally:
        conn.close()


if __name__ == "__main__":
    main()
