"""The signature a generated kernel carries, and the host runner reading it."""

from __future__ import annotations

import pytest

from singe import host
from singe.codegen import generate, generate_baseline
from singe.compiler import compile_kernel
from singe.kernels.registry import FIELDS
from singe.signature import MARKER, find_signature
from conftest import load


@pytest.mark.parametrize("kernel", ["viscosity", "diffusion", "chemistry"])
def test_generated_kernels_carry_their_signature(kernel):
    mech = load("h2o2")
    compiled = compile_kernel(mech, kernel, warps=2)
    for generated, style in ((generate(compiled), "warp-specialized"), (generate_baseline(compiled), "baseline")):
        signature = find_signature(generated.cu)
        inputs, outputs = compiled.spec.signature(compiled.graph)
        assert (signature.entry, signature.kernel, signature.style) == (generated.name, kernel, style)
        assert signature.species == tuple(mech.transported_species)
        assert [p.field for p in signature.parameters] == inputs + outputs
        assert all(p.output == (p.field in outputs) and p.rows == FIELDS[p.field].rows
                   for p in signature.parameters)
        source = host.parse_source(generated.cu)
        assert source.name == generated.name and source.inputs == inputs and source.outputs == outputs
        assert source.rows(outputs[0]) == (1 if FIELDS[outputs[0]].rows == "point" else len(mech.transported_species))


def test_text_without_or_with_a_broken_signature_is_refused():
    cu = generate(compile_kernel(load("h2o2"), "viscosity", warps=2)).cu
    unsigned = "\n".join(line for line in cu.splitlines() if not line.startswith(MARKER))
    with pytest.raises(host.HostRuntimeError, match="no '// singe-signature:' line"):
        host.parse_source(unsigned)
    with pytest.raises(host.HostRuntimeError, match="malformed signature"):
        host.parse_source(unsigned + "\n" + MARKER + "{not json\n")
    with pytest.raises(host.HostRuntimeError, match="2 signature lines"):
        host.parse_source(cu + cu)
