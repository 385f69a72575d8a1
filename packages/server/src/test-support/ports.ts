import net from 'node:net';

/**
 * `count` different ports free on 127.0.0.1 now. Each probe stays open until all are chosen: closed one
 * by one, the system may hand the same port out twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const probes: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const probe = net.createServer();
      probes.push(probe);
      await new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen(0, '127.0.0.1', resolve);
      });
    }
    return probes.map((probe) => (probe.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(probes.map((probe) => new Promise((resolve) => probe.close(resolve))));
  }
}
