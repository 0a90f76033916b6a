"""A whole match over TLS, with mutual TLS, through the real commands (`oddtrick serve` and
two `oddtrick bot` processes), with certificates made in the test; plaintext callers and
callers without a client certificate are turned away. And a tournament over TLS."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_support import reap
from tls_support import make_certificates

from oddtrick.rules import GameConfig
from oddtrick_referee import check_log
from oddtrick_referee.competitions.tournaments.tournament import (
    TournamentSettings,
    parse_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.transport.tls import ServerTls

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
ODDTRICK = [sys.executable, "-m", "oddtrick"]


def health(channel: grpc.Channel) -> int:
    return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5).status


def refused(channel: grpc.Channel) -> grpc.StatusCode | None:
    try:
        health(channel)
    except grpc.RpcError as error:
        return error.code()
    return None


def test_a_whole_match_over_mutual_tls_with_the_real_commands(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path / "certs")
    tls = ["--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key)]
    serve = subprocess.Popen(
        [
            *ODDTRICK, "serve", "--port", "0", "--data-dir", str(tmp_path / "data"), "--game", "classic",
            "--deals", "2", "--ns", "north-south", "--ew", "east-west", *tls,
            "--tls-client-ca", str(certs.ca),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    bots = []
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        match = re.search(r"listening on (\S+);", first)
        assert match, first
        address = match.group(1)
        ca = certs.ca.read_bytes()
        with grpc.insecure_channel(address) as plain:
            assert refused(plain) is grpc.StatusCode.UNAVAILABLE
        with grpc.secure_channel(address, grpc.ssl_channel_credentials(ca)) as no_client_cert:
            assert refused(no_client_cert) is grpc.StatusCode.UNAVAILABLE
        for name in ("north-south", "east-west"):
            command = [
                *ODDTRICK, "bot", f"{RANDOM_BOT}:RandomBot", "--server", address, "--name", name,
                "--seats", "2", "--max-matches", "1", "--ca", str(certs.ca),
                "--tls-cert", str(certs.client_cert), "--tls-key", str(certs.client_key),
            ]  # fmt: skip
            bots.append(
                subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            )
        out, err = serve.communicate(timeout=120)
        assert serve.returncode == 0, err
        for bot in bots:
            bot_out, _ = bot.communicate(timeout=30)
            assert bot.returncode == 0, bot_out
    finally:
        for process in (serve, *bots):
            reap(process)
    (log_path,) = (tmp_path / "data" / "logs").glob("*.jsonl")
    report = check_log(log_path)
    assert report.ok, report.describe()
    assert "match " in out


async def test_a_tournament_over_tls_starts_its_own_bots_over_loopback(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path / "certs")
    plan = TournamentSettings(
        entries=(parse_entry(f"one={RANDOM_BOT}"), parse_entry(f"two={RANDOM_BOT}")),
        config=GameConfig.classic(),
        deals=1,
        set_size=1,
        tables=1,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed="tls",
    )
    plaintext_answers = []

    def listening(address: str) -> None:  # the gRPC thread answers: a blocking call is fine here
        with grpc.insecure_channel(address) as plain:
            plaintext_answers.append(refused(plain))

    credentials = ServerTls(certs.server_cert, certs.server_key).credentials()
    standings = await run_tournament(
        plan, tmp_path / "data", progress_stream=io.StringIO(), on_listening=listening, tls=credentials
    )
    assert sum(row.deals for row in standings.rows) == 2
    assert plaintext_answers == [grpc.StatusCode.UNAVAILABLE]  # the entrants' port speaks only TLS
