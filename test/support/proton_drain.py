#!/usr/bin/python3
"""Qpid Proton (an independent AMQP 1.0 implementation) draining a queue on a broker.

Usage: proton_drain.py URL QUEUE CREDIT
Attaches a receiver without prefetch, grants CREDIT with drain set, accepts what arrives, and at
the broker's drain answer (link credit back to zero) prints one JSON line:
{"received": [bodies in arrival order], "credit": <link credit at the answer>}.
Exits 1 without an answer within 30 s.
"""
import json
import sys

from proton.handlers import MessagingHandler
from proton.reactor import Container


class Drain(MessagingHandler):
    def __init__(self, url, queue, credit):
        super().__init__(prefetch=0)
        self.url = url
        self.queue = queue
        self.credit = credit
        self.received = []
        self.answered = False

    def on_start(self, event):
        self.timer = event.container.schedule(30, self)
        conn = event.container.connect(self.url)
        event.container.create_receiver(conn, self.queue)

    def on_link_opened(self, event):
        if event.receiver is not None and not event.receiver.drain_mode:
            event.receiver.drain(self.credit)

    def on_message(self, event):
        self.received.append(event.message.body)

    def on_link_flow(self, event):
        receiver = event.receiver
        if receiver is None or self.answered or not receiver.drain_mode or receiver.draining():
            return
        # drain mode set and no credit left unanswered: the broker's answer
        self.answered = True
        print(json.dumps({"received": self.received, "credit": receiver.credit}))
        self.timer.cancel()
        event.connection.close()

    def on_timer_task(self, event):
        print(json.dumps({"received": self.received, "timeout": True}))
        event.container.stop()
        sys.exit(1)


if __name__ == "__main__":
    url, queue, credit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    Container(Drain(url, queue, credit)).run()
