import { uuidV7 } from '../../platform/random'

/**
 * dlv_ + a UUIDv7 in hex: monotonic even within one millisecond, so deliveries fanned out or replayed
 * together keep their order ("oldest first" for replay-all, "newest first" for lists).
 */
export const deliveryId = () => `dlv_${uuidV7().replaceAll('-', '')}`
