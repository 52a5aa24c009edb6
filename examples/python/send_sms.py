"""Start msgflow's `sendSms` workflow from Python and read its result, through msgflow's codec endpoint.

msgflow encrypts every Temporal payload. Rather than reimplementing its encryption, this client sends each
payload to the codec endpoint's `/encode` (before it goes to Temporal) and `/decode` (after it comes back),
with the codec token as a bearer token. The input is checked first against msgflow's published JSON Schema
(schemas/workflow-inputs/sendSms.json), so a bad one is named here, before anything starts. The settings come
from the environment, else from `.data/dev.env` (what `msgflow dev` writes), plus MSGFLOW_CODEC_URL:

    TEMPORAL_ADDRESS     127.0.0.1:7233        TEMPORAL_NAMESPACE   default
    MSGFLOW_TASK_QUEUE   msgflow               MSGFLOW_CODEC_URL    http://127.0.0.1:4030
    MSGFLOW_CODEC_TOKEN  (required)

Usage: python send_sms.py <number> [<message>]   — prints the result as JSON; exits 1 unless delivered,
2 when the input breaks the schema.
"""

import asyncio
import dataclasses
import json
import os
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import List, Optional, Sequence

import jsonschema
import temporalio.converter
from google.protobuf.json_format import MessageToDict, ParseDict
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.converter import PayloadCodec

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "workflow-inputs" / "sendSms.json"


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


class RemoteCodec(PayloadCodec):
    """Temporal's remote codec protocol: `{"payloads": [...]}` in proto3 JSON, both ways."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.token = token

    def _call(self, operation: str, payloads: Sequence[Payload]) -> List[Payload]:
        body = json.dumps({"payloads": [MessageToDict(p) for p in payloads]}).encode()
        request = urllib.request.Request(
            f"{self.url}/{operation}",
            data=body,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.load(response)
        return [ParseDict(p, Payload()) for p in answer["payloads"]]

    async def encode(self, payloads: Sequence[Payload]) -> List[Payload]:
        return await asyncio.to_thread(self._call, "encode", payloads)

    async def decode(self, payloads: Sequence[Payload]) -> List[Payload]:
        return await asyncio.to_thread(self._call, "decode", payloads)


def input_problem(workflow_input: dict) -> Optional[str]:
    """The first way the input breaks msgflow's published schema, naming the field; None when it holds."""
    schema = json.loads(SCHEMA.read_text())
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(workflow_input))
    if error is None:
        return None
    field = ".".join(str(part) for part in error.absolute_path) or "input"
    # msgflow's schemas carry zod's message for a pattern beside it (`patternMessage`): clearer than the regex.
    return f"{field}: {error.schema.get('patternMessage', error.message)}"


async def main(number: str, message: str) -> int:
    workflow_input = {"recipients": [number], "sender": "ACME", "message": message}
    problem = input_problem(workflow_input)
    if problem:
        print(f"bad input: {problem}", file=sys.stderr)
        return 2
    env = settings()
    token = env.get("MSGFLOW_CODEC_TOKEN", "").split(",")[0]
    if not token:
        print("MSGFLOW_CODEC_TOKEN is not set (nor in .data/dev.env): start `msgflow dev` first", file=sys.stderr)
        return 2
    codec = RemoteCodec(env.get("MSGFLOW_CODEC_URL", "http://127.0.0.1:4030"), token)
    client = await Client.connect(
        env.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
        namespace=env.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=dataclasses.replace(temporalio.converter.default(), payload_codec=codec),
    )
    # The key makes the start idempotent: the same id finds the same workflow and never sends twice.
    handle = await client.start_workflow(
        "sendSms",
        workflow_input,
        id=f"sms:python-{uuid.uuid4()}",
        task_queue=env.get("MSGFLOW_TASK_QUEUE", "msgflow"),
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    result = await handle.result()
    print(json.dumps(result))
    statuses = [m["status"] for m in result["messages"]]
    return 0 if statuses and all(s == "delivered" for s in statuses) else 1


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "Hello from Python")))
