"""The per-address budget of failed Hellos (transport/hello_limits.py), on its own clock."""

from __future__ import annotations

from oddtrick_referee.transport.hello_limits import FailedHellos, address_of


def test_peers_count_by_ipv4_address_and_ipv6_network() -> None:
    assert address_of("ipv4:203.0.113.7:50123") == "203.0.113.7"
    assert address_of("ipv6:[2001:db8:1:2:3:4:5:6]:443") == "2001:db8:1:2::/64"
    assert address_of("ipv6:[2001:db8:1:2:ffff::1]:1") == "2001:db8:1:2::/64"
    assert address_of("ipv6:[::ffff:198.51.100.1]:9") == "198.51.100.1"
    assert address_of("unix:/tmp/socket") == "unix:/tmp/socket"


def test_a_spent_budget_refills_at_its_rate_and_addresses_are_apart() -> None:
    budget = FailedHellos(burst=3, per_s=2.0)
    for _ in range(3):
        assert budget.wait_s("a", now=10.0) == 0.0
        budget.failed("a", now=10.0)
    assert budget.wait_s("a", now=10.0) == 0.5
    assert budget.wait_s("b", now=10.0) == 0.0
    assert budget.wait_s("a", now=10.5) == 0.0
    budget.failed("a", now=10.5)
    assert budget.wait_s("a", now=10.5) == 0.5
    assert budget.wait_s("a", now=100.0) == 0.0  # refilled, never beyond the burst
    for _ in range(3):
        budget.failed("a", now=100.0)
    assert budget.wait_s("a", now=100.0) > 0


def test_the_budgets_kept_are_bounded() -> None:
    budget = FailedHellos(burst=1, per_s=0.001, max_addresses=100)
    for number in range(1000):
        budget.failed(f"10.0.{number // 256}.{number % 256}", now=1.0)
    assert len(budget._buckets) == 100
    assert budget.wait_s("10.0.3.231", now=1.0) > 0  # the newest are kept
