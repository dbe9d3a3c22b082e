"""Compile-only targets belong to the backends: each declares how its targets are
written, their warp size and its default; the core only looks them up."""

from __future__ import annotations

import pytest
from zl_backend_cuda import plugin as cuda_plugin
from zl_backend_rocm import plugin as rocm_plugin
from zl_core import Backend, PluginHost, hookimpl
from zl_core.app import resolve
from zl_core.app.options import Measurement
from zl_core.foundation import targets
from zl_core.foundation.backend import CompileTarget, TargetGrammar
from zl_core.foundation.errors import UsageError

ACME = Backend(name="acme", compile_targets=TargetGrammar(
    kind="acme", arch=r"v\d+", warp_size=16, usage="acme:v<n>", examples=("acme:v2",),
    default="acme:v2"))


class Acme:
    @hookimpl
    def zl_backends(self):
        return [ACME]


@pytest.fixture
def host():
    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0")
    host.register(rocm_plugin, name="rocm", package="zl-backend-rocm", version="0")
    return host


def test_a_third_party_backend_brings_its_own_targets():
    backend, target = targets.resolve(" ACME:v12 ", [ACME])
    assert backend is ACME
    assert target == CompileTarget(kind="acme", arch="v12", warp_size=16)
    assert target.name == "acme:v12" and target.triple == ("acme", "v12", 16)
    assert targets.default([ACME]) == "acme:v2"


def test_each_vendor_declares_its_grammar_and_warp_size(host):
    cuda, rocm = host.get_backend("cuda"), host.get_backend("rocm")
    assert targets.resolve("cuda:90", host.backends()) == (cuda, CompileTarget(kind="cuda", arch=90,
                                                                              warp_size=32))
    assert targets.resolve("hip:gfx942", host.backends())[0] is rocm
    assert targets.resolve("hip:gfx942", host.backends())[1].warp_size == 64
    with pytest.raises(UsageError) as err:
        targets.resolve("musa:22", host.backends())
    assert str(err.value) == ("bad target 'musa:22': expected cuda:<sm> (e.g. cuda:90, cuda:80) or "
                              "hip:<gfx arch> (e.g. hip:gfx942)")


def test_the_backend_is_picked_by_the_grammar_its_target_follows(host):
    host.register(Acme(), name="acme")
    assert resolve.resolve_backend(host, None, compile_target="hip:gfx90a").name == "rocm"
    assert resolve.resolve_backend(host, None, compile_target="acme:v3").name == "acme"


MEASURE = Measurement(compile_only=True)


class _Suite:
    name = "builtin"
    supports_compile_only = True


def test_default_target_comes_from_the_backend(host, monkeypatch):
    monkeypatch.delenv("ZL_BACKEND", raising=False)
    # the only default declared among cuda and rocm
    assert resolve.check_compile_only(MEASURE, _Suite(), host).target == "cuda:90"
    with pytest.raises(UsageError, match=r"no default compile-only target for backend\(s\) rocm; "
                                         r"pass --target \(hip:<gfx arch>"):
        resolve.check_compile_only(MEASURE, _Suite(), host, "rocm")
    host.register(Acme(), name="acme")
    with pytest.raises(UsageError, match="several default compile-only targets"):
        resolve.check_compile_only(MEASURE, _Suite(), host)
    assert resolve.check_compile_only(MEASURE, _Suite(), host, "acme").target == "acme:v2"
