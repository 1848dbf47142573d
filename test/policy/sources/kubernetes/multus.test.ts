/**
 * Multus secondary networks: the `k8s.v1.cni.cncf.io/networks` annotation read as Multus parses it (a JSON list with
 * Go's any-case field names, or a comma list of `[ns/]name[@if]`), and `v1.multus-cni.io/default-network`, each
 * refused by sandbox-disallow-exposed-ports at the annotation; a pod with neither passes.
 */
import { describe, expect, it } from "vitest";
import { parseNetworks } from "../../../../policy/sources/kubernetes/multus";
import { carrier, safePodSpec } from "../../fixtures";
import { type Outcome, validate } from "../../harness";

const RULE = "sandbox-disallow-exposed-ports";
const mine = (o: Outcome) => o.violations.filter((v) => v.policy === RULE).map((v) => v.message);

function deployment(annotations: Record<string, unknown>): Outcome {
  const c = carrier("Deployment");
  const props = c.build(safePodSpec()) as { spec: { template: { metadata?: Record<string, unknown> } } };
  props.spec.template.metadata = { ...(props.spec.template.metadata ?? {}), annotations };
  return validate(c.type, props);
}

describe("Multus annotations", () => {
  it.each([
    ["macvlan-conf", ["macvlan-conf"]],
    [" lan , other/sriov-net@net2 ,", ["lan", "other/sriov-net", "(empty)"]],
    ['[{"name":"lan","namespace":"infra","interface":"eth1"}]', ["infra/lan"]],
    ['[{"NAME":"lan"}]', ["lan"]],
    ["", []],
  ])("%j names %j", (text, want) => {
    expect(parseNetworks(text)).toEqual(want);
  });

  it("a JSON value that does not parse, or is not a list, cannot be read", () => {
    expect(parseNetworks('[{"name": "lan"')).toEqual({ reason: "the JSON list does not parse" });
    expect(parseNetworks('{"name": "lan"}')).toEqual({ reason: "the JSON value is not a list" });
  });

  it("refuses every attachment at the annotation, and a replaced default network", () => {
    expect(mine(deployment({ "k8s.v1.cni.cncf.io/networks": "macvlan-conf, infra/hostdev" }))).toEqual([
      expect.stringMatching(/secondary network "macvlan-conf" .*host's own network/),
      expect.stringMatching(/secondary network "infra\/hostdev"/),
    ]);
    expect(mine(deployment({ "v1.multus-cni.io/default-network": "kube-system/flat" }))).toEqual([
      expect.stringMatching(/default network replaced by "kube-system\/flat"/),
    ]);
    expect(mine(deployment({ "k8s.v1.cni.cncf.io/networks": '[{"name": ' }))).toEqual([
      expect.stringMatching(/cannot be read \(the JSON list does not parse\)/),
    ]);
  });

  it("passes a pod with no Multus annotation, and other annotations", () => {
    expect(
      mine(deployment({ "k8s.v1.cni.cncf.io/network-status": "[]", "example.com/networks": "lan" })),
    ).toEqual([]);
  });
});
