// Broken JSON inputs, written to a temporary folder by the tests (the linter reads every *.json of the tree).
export const BROKEN_JSON: Readonly<Record<string, string>> = {
  "bad-preview.json":
    '{\n  "steps": [\n    { "op": "create", "urn": "urn:pulumi:dev::p::docker:index/container:Container::x",\n      "newState": { "type": "docker:index/container:Container", }\n  ]\n}\n',
  "bad-export.json":
    '{\n  "version": 3,\n  "deployment": {\n    "resources": [\n      { "urn": "urn:x" "type": "y" }\n    ]\n  }\n}\n',
  "bad-body.json": '{\n  "Image": "busybox",\n  "HostConfig": {\n    "CapDrop": ["ALL"],,\n  }\n}\n',
};
