"""lionsim.forms: the workload names and option forms the configuration checks without torch
agree with what lionsim.workloads registers and accepts."""

import pytest

from lionsim.errors import LionsimError
from lionsim.forms import built_in_workloads, check_workload_name
from lionsim.workloads import WORKLOADS, workload_class


def test_the_names_read_without_importing_are_the_registrys():
    assert built_in_workloads() == tuple(sorted(WORKLOADS.names()))


@pytest.mark.parametrize("name", ["mlp", "MLP", "gpt", "examples/plugins/cnn_workload.py:make", "pkg.mod:make"])
def test_what_the_registry_may_accept_passes(name):
    check_workload_name(name)  # the file and function are the registry's to check


def test_an_unknown_name_is_refused_with_the_registrys_line():
    with pytest.raises(LionsimError) as light:
        check_workload_name("mpl")
    with pytest.raises(LionsimError) as registry:
        workload_class("mpl")
    assert str(light.value) == str(registry.value)
    assert "choose from: gpt, mlp, vit" in str(light.value) and "did you mean 'mlp'" in str(light.value)
