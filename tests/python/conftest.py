"""Shared pytest fixtures: a seeded generator (EDGEWISE_TEST_SEED, printed) and references."""

import os

import numpy as np
import pytest

SEED = int(os.environ.get("EDGEWISE_TEST_SEED", "20261129"))


def pytest_report_header(config):
    return f"edgewise test seed {SEED} (set EDGEWISE_TEST_SEED to change)"


@pytest.fixture
def rng(request):
    # One stream per test, stable under test selection.
    salt = sum(map(ord, request.node.name))
    return np.random.default_rng([SEED, salt])
