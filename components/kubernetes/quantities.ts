/** Kubernetes quantities as the toolkit writes them. Binary units: the spec's MB are MiB, as Docker's are. */

/** `1.5` vCPU as a CPU quantity in millicores: `1500m`. */
export function cpuQuantity(vcpu: number): string {
  return `${Math.round(vcpu * 1000)}m`;
}

/** MiB as a quantity: `512Mi`. */
export function mibQuantity(mib: number): string {
  return `${Math.round(mib)}Mi`;
}
