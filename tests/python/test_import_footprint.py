"""`import edgewise` maps no CUDA library beyond the runtime: cuBLAS and cuSPARSE are
opened on first use, so the module imports under a 1 GiB address-space limit (a CPU
machine, a container with a small ulimit -v), CUDA build or not."""

import os
import subprocess
import sys

import pytest

SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")


@pytest.mark.skipif(SANITIZED, reason="ASan reserves terabytes of address space: no ulimit -v applies under it")
def test_import_and_a_kernel_run_under_a_1_gib_address_space_limit():
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
        "import numpy as np, edgewise;"
        "out = edgewise.segment_reduce(np.ones((4, 2), np.float32), np.array([0, 1, 4]), op='sum');"
        "assert out.tolist() == [[1, 1], [3, 3]], out;"
        "import re; maps = open('/proc/self/maps').read();"
        "loaded = sorted(set(re.findall(r'lib(cublas\\w*|cusparse)\\.so', maps)));"
        "assert not loaded, loaded; print('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
