/** The properties of a typical event, the one the per-event costs are measured on: an order with two line items. */
export const orderProperties = (index) => ({
  orderId: `o-${index}`,
  total: 59.9,
  currency: 'EUR',
  items: [
    { sku: 'SKU-1', price: 19.9, quantity: 1 },
    { sku: 'SKU-2', price: 20, quantity: 2 },
  ],
})

/** The event the webhook throughput and memory scenarios send (webhook-run.mjs, old-garbage.mjs): a smaller order. */
export const smallOrderEvent = (index) => ({
  type: 'track',
  userId: `user-${index % 1000}`,
  event: 'Order Completed',
  properties: { index, total: 42.5, currency: 'EUR' },
})
