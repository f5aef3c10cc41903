import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Registered by the dev server at start (`--search-attribute`); operators filter the UI by them. */
export const MerchantIdKey = defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD);
export const BorrowerIdKey = defineSearchAttributeKey('BorrowerId', SearchAttributeType.KEYWORD);
export const PaymentStatusKey = defineSearchAttributeKey('PaymentStatus', SearchAttributeType.KEYWORD);
export const BatchIdKey = defineSearchAttributeKey('BatchId', SearchAttributeType.KEYWORD);
/** The merchant's order reference on a payment workflow: find the payment of an order. */
export const OrderRefKey = defineSearchAttributeKey('OrderRef', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = { MerchantId: 'Keyword', BorrowerId: 'Keyword', PaymentStatus: 'Keyword', BatchId: 'Keyword', OrderRef: 'Keyword' } as const;
