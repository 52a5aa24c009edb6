"""Another team's Python workflows calling msgflow's `msgflow` Nexus service through an endpoint.

The caller lives in a namespace of its own and knows only the endpoint's name and the service's operations:
not msgflow's namespace, task queue, encryption key or codec. Its client and worker use Temporal's default
data converter, and it still reads every result in the clear (msgflow answers outside its own codec).

It runs a worker for two workflows and then:
  1. `NotifyByText` sends an SMS through `sendSms` and returns each message's final state;
  2. `SignIn` sends a one-time password through `sendOtp`, then checks each code a user enters (an update)
     through `verifyOtp`: here a wrong code first (refused), then the one the sandbox's inbox shows
     (the handset, played by reading the sandbox's admin API).

Settings come from the environment, else from `.data/dev.env` (what `msgflow dev` writes):

    TEMPORAL_ADDRESS             127.0.0.1:7233     MSGFLOW_CALLER_NAMESPACE   callers
    MSGFLOW_NEXUS_ENDPOINT       msgflow            MSGFLOW_SANDBOX_URL, MSGFLOW_SANDBOX_ADMIN_TOKEN (the inbox)

Usage: python nexus_caller.py <sms number> <otp number>   — prints each result as JSON; exits 1 unless the SMS
is delivered, the wrong code refused and the right one verified.
"""

import asyncio
import json
import os
import re
import sys
import urllib.parse
import urllib.request
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, Optional

import nexusrpc
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

Answer = Dict[str, Any]


@nexusrpc.service(name="msgflow")
class MsgflowService:
    """msgflow's service definition as the caller declares it: names on the wire, JSON objects both ways."""

    send_sms: nexusrpc.Operation[Answer, Answer] = nexusrpc.Operation(name="sendSms")
    send_otp: nexusrpc.Operation[Answer, Answer] = nexusrpc.Operation(name="sendOtp")
    verify_otp: nexusrpc.Operation[Answer, Answer] = nexusrpc.Operation(name="verifyOtp")


# A send answers once every message is final, which can take a while; OTP answers come at interactive latency.
SMS_TIMEOUT = timedelta(hours=7)
OTP_TIMEOUT = timedelta(minutes=1)
# How long a user has to enter the code (msgflow's code expires sooner: 10 minutes by default).
CODE_ENTRY_TIMEOUT = timedelta(minutes=15)


@workflow.defn(name="NotifyByText")
class NotifyByText:
    @workflow.run
    async def run(self, endpoint: str, recipient: str, message: str) -> Answer:
        msgflow = workflow.create_nexus_client(service=MsgflowService, endpoint=endpoint)
        return await msgflow.execute_operation(
            MsgflowService.send_sms,
            {"recipients": [recipient], "sender": "ACME", "message": message},
            schedule_to_close_timeout=SMS_TIMEOUT,
        )


@workflow.defn(name="SignIn")
class SignIn:
    """Sends a login code, then checks the codes entered until one is verified or no more can be."""

    def __init__(self) -> None:
        self.endpoint = ""
        self.recipient = ""
        self.sent: Optional[Answer] = None
        self.finished = False

    @workflow.run
    async def run(self, endpoint: str, recipient: str) -> Answer:
        self.endpoint, self.recipient = endpoint, recipient
        self.sent = await self._msgflow().execute_operation(
            MsgflowService.send_otp,
            {"purpose": "login", "recipient": recipient},
            schedule_to_close_timeout=OTP_TIMEOUT,
        )
        if self.sent["status"] == "sent":
            try:
                await workflow.wait_condition(lambda: self.finished, timeout=CODE_ENTRY_TIMEOUT)
            except asyncio.TimeoutError:
                pass  # no code verified in time: not signed in
        await workflow.wait_condition(workflow.all_handlers_finished)
        return {"sent": self.sent, "signedIn": self.finished}

    @workflow.query
    def sent_answer(self) -> Optional[Answer]:
        return self.sent

    @workflow.update
    async def enter_code(self, code: str) -> Answer:
        await workflow.wait_condition(lambda: self.sent is not None)
        answer = await self._msgflow().execute_operation(
            MsgflowService.verify_otp,
            {"purpose": "login", "recipient": self.recipient, "code": code},
            schedule_to_close_timeout=OTP_TIMEOUT,
        )
        # `invalid` leaves attempts; verified, locked, expired or used ends the sign-in.
        self.finished = self.finished or answer["status"] != "invalid"
        return answer

    def _msgflow(self) -> "workflow.NexusClient[MsgflowService]":
        return workflow.create_nexus_client(service=MsgflowService, endpoint=self.endpoint)


def settings() -> dict:
    """The environment over `.data/dev.env` (KEY=value lines) in the current folder."""
    found = {}
    dev_env = Path(".data/dev.env")
    if dev_env.exists():
        for line in dev_env.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and not key.startswith("#"):
                found[key.strip()] = value.strip()
    found.update({k: v for k, v in os.environ.items() if k.startswith(("TEMPORAL_", "MSGFLOW_"))})
    return found


def inbox_code(env: dict, recipient: str) -> str:
    """The newest code the sandbox delivered to `recipient` (what the user reads on the handset)."""
    request = urllib.request.Request(
        f"{env['MSGFLOW_SANDBOX_URL'].rstrip('/')}/admin/inbox?to={urllib.parse.quote(recipient)}",
        headers={"Authorization": f"Bearer {env['MSGFLOW_SANDBOX_ADMIN_TOKEN']}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        entries = json.load(response)["data"]  # newest first
    found = re.search(r"\b(\d{4,10})\b", entries[0]["text"]) if entries else None
    if not found:
        raise RuntimeError(f"no code in the inbox of {recipient}")
    return found.group(1)


def wrong_code(code: str) -> str:
    """A code of the same length that is not `code`."""
    return str((int(code) + 1) % 10 ** len(code)).zfill(len(code))


async def main(sms_number: str, otp_number: str) -> int:
    env = settings()
    missing = [k for k in ("MSGFLOW_SANDBOX_URL", "MSGFLOW_SANDBOX_ADMIN_TOKEN") if not env.get(k)]
    if missing:
        print(f"{', '.join(missing)} not set (nor in .data/dev.env): start `msgflow dev` first", file=sys.stderr)
        return 2
    endpoint = env.get("MSGFLOW_NEXUS_ENDPOINT", "msgflow")
    # Temporal's default data converter: the caller holds none of msgflow's keys.
    client = await Client.connect(
        env.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"), namespace=env.get("MSGFLOW_CALLER_NAMESPACE", "callers")
    )
    task_queue = f"python-caller-{uuid.uuid4()}"
    ok = True
    async with Worker(client, task_queue=task_queue, workflows=[NotifyByText, SignIn]):
        sms = await client.execute_workflow(
            NotifyByText.run,
            args=[endpoint, sms_number, "Your order has shipped"],
            id=f"notify-{uuid.uuid4()}",
            task_queue=task_queue,
        )
        print(json.dumps({"sendSms": sms}))
        statuses = [m["status"] for m in sms["messages"]]
        ok = ok and bool(statuses) and all(s == "delivered" for s in statuses)

        sign_in = await client.start_workflow(
            SignIn.run, args=[endpoint, otp_number], id=f"sign-in-{uuid.uuid4()}", task_queue=task_queue
        )
        sent = None
        for _ in range(300):
            sent = await sign_in.query(SignIn.sent_answer)
            if sent is not None:
                break
            await asyncio.sleep(0.1)
        print(json.dumps({"sendOtp": sent}))
        if not sent or sent["status"] != "sent":
            return 1
        code = inbox_code(env, otp_number)
        refused = await sign_in.execute_update(SignIn.enter_code, wrong_code(code))
        print(json.dumps({"verifyOtp (a wrong code)": refused}))
        verified = await sign_in.execute_update(SignIn.enter_code, code)
        print(json.dumps({"verifyOtp": verified}))
        result = await sign_in.result()
        ok = ok and refused["status"] == "invalid" and verified["status"] == "verified" and result["signedIn"]
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        sys.exit(2)
    status = asyncio.run(main(sys.argv[1], sys.argv[2]))
    # The SDK's native threads can crash the interpreter's teardown after a worker ran ("PyGILState_Release",
    # temporalio/sdk-python#300): everything is done and printed, so the teardown is skipped.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
