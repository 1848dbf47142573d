/**
 * Where reports link to: the toolkit's repository (SARIF's `informationUri`) and the rules' documentation at the
 * report's version (every SARIF rule's `helpUri`), so a code-scanning alert opens the rules table it came from.
 */

/** The toolkit's repository (package.json's `repository`; a test keeps them equal). */
export const REPOSITORY_URL = "https://github.com/sandbox-projects/toolkit";

/**
 * The rules table (policy/README.md, one row per rule id: what it catches, its level, crosswalk and remediation) at
 * the release tag `v<version>`, or on the main branch for a version that is not a release.
 */
export function rulesHelpUri(version: string): string {
  const ref = /^\d+\.\d+\.\d+$/.test(version) && version !== "0.0.0" ? `v${version}` : "main";
  return `${REPOSITORY_URL}/blob/${ref}/policy/README.md#rules`;
}
