import { createChannel, type Channel, type ModuleContext, type ServiceName } from '@hangar/platform';

/**
 * Governance's channels to the services it calls (the run executor for webhooks, every owner for
 * retention). Each is opened on first use: in one process those services start after governance.
 */
export function createServiceChannels(addressOf: ModuleContext['addressOf']) {
  const channels = new Map<ServiceName, Channel>();
  return {
    to(service: ServiceName): Channel {
      let channel = channels.get(service);
      if (!channel) channels.set(service, (channel = createChannel(addressOf(service))));
      return channel;
    },
    close() {
      for (const channel of channels.values()) channel.close();
      channels.clear();
    },
  };
}

export type ServiceChannels = ReturnType<typeof createServiceChannels>;
