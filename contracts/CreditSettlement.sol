// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC3009Asset {
    function transfer(address to, uint256 value) external returns (bool);

    function receiveWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external;
}

/// @title CreditSettlement: pays merchants from the credit pool in batches and books borrowers' debt.
/// @notice Ids are UUIDs as bytes32 (the 16 UUID bytes left-padded with zeros). Payouts and debits
/// are aggregated off-chain (one transfer per payout address, one debt write per borrower, per batch);
/// the contract only checks that entries, payouts and debits add up to the same total.
contract CreditSettlement {
    struct Entry {
        bytes32 paymentId;
        bytes32 borrowerId;
        bytes32 merchantId;
        uint256 amount;
    }

    struct Payout {
        address payTo;
        uint256 amount;
    }

    struct Debit {
        bytes32 borrowerId;
        uint256 amount;
    }

    /// @dev An EIP-3009 ReceiveWithAuthorization (to = this contract), signed by whoever pays the refund back.
    struct RefundAuthorization {
        address from;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    IERC3009Asset public immutable asset;
    address public owner;
    mapping(address => bool) public isSettler;
    /// @notice Merkle root of each settled batch's entries (zero: not settled). See _entriesRoot for the tree.
    mapping(bytes32 => bytes32) public batchRoot;
    mapping(bytes32 => uint256) public debtOf;
    /// @notice paymentId -> cumulative amount refunded to the pool.
    mapping(bytes32 => uint256) public refundedOf;

    event PaymentSettled(bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, uint256 amount);
    event BatchSettled(bytes32 indexed batchId, uint256 paymentCount, uint256 total);
    event Repaid(bytes32 indexed borrowerId, address indexed from, uint256 amount);
    event Refunded(
        bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, address from, bytes32 nonce, uint256 amount,
        uint256 debtReduced
    );
    event SettlerSet(address indexed settler, bool allowed);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    error NotOwner();
    error NotSettler();
    error ZeroAddress();
    error EmptyBatch();
    error SumMismatch();
    error TransferFailed();
    error InvalidAmount();
    error NonceNotBoundToBorrower();
    error NotInBatch();
    error RefundExceedsPayment();
    error NonceNotBoundToPayment();

    constructor(IERC3009Asset asset_) {
        if (address(asset_) == address(0)) revert ZeroAddress();
        asset = asset_;
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    modifier onlySettler() {
        if (!isSettler[msg.sender]) revert NotSettler();
        _;
    }

    function setSettler(address settler, bool allowed) external onlyOwner {
        if (settler == address(0)) revert ZeroAddress();
        isSettler[settler] = allowed;
        emit SettlerSet(settler, allowed);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    /// @notice Whether batchId has settled (the getter of the former `mapping(bytes32 => bool) batchSettled`).
    function batchSettled(bytes32 batchId) external view returns (bool) {
        return batchRoot[batchId] != 0;
    }

    /// @return settledNow false when batchId was settled before: a retried submission is a no-op, never a second payment.
    function settleBatch(bytes32 batchId, Entry[] calldata entries, Payout[] calldata payouts, Debit[] calldata debits)
        external
        onlySettler
        returns (bool settledNow)
    {
        if (batchRoot[batchId] != 0) return false;
        uint256 count = entries.length;
        if (count == 0) revert EmptyBatch();
        batchRoot[batchId] = _entriesRoot(entries);

        // The per-payment loop is the hot path: emit PaymentSettled straight from calldata (the ABI decoder
        // has already checked that entries lies within calldata) and sum with an overflow check.
        uint256 total;
        bytes32 topic = PaymentSettled.selector;
        assembly ("memory-safe") {
            for { let p := entries.offset let end := add(p, mul(count, 0x80)) } lt(p, end) { p := add(p, 0x80) } {
                let amount := calldataload(add(p, 0x60))
                let sum := add(total, amount)
                if lt(sum, total) {
                    mstore(0, shl(224, 0x4e487b71)) // Panic(0x11), as checked arithmetic would
                    mstore(4, 0x11)
                    revert(0, 0x24)
                }
                total := sum
                mstore(0, amount)
                log4(0, 0x20, topic, calldataload(p), calldataload(add(p, 0x20)), calldataload(add(p, 0x40)))
            }
        }

        uint256 paid;
        for (uint256 i; i < payouts.length;) {
            Payout calldata p = payouts[i];
            paid += p.amount;
            if (!asset.transfer(p.payTo, p.amount)) revert TransferFailed();
            unchecked { ++i; }
        }

        // In assembly too: the batch root costs ~180 gas per payment, and this pays for about half of it.
        // Same checks as `debited += d.amount; debtOf[d.borrowerId] += d.amount;`.
        uint256 debited;
        assembly ("memory-safe") {
            mstore(0x20, debtOf.slot)
            for { let p := debits.offset let end := add(p, shl(6, debits.length)) } lt(p, end) { p := add(p, 0x40) } {
                let amount := calldataload(add(p, 0x20))
                let sum := add(debited, amount)
                mstore(0, calldataload(p))
                let slot := keccak256(0, 0x40)
                let debt := sload(slot)
                let newDebt := add(debt, amount)
                if or(lt(sum, debited), lt(newDebt, debt)) {
                    mstore(0, shl(224, 0x4e487b71)) // Panic(0x11)
                    mstore(4, 0x11)
                    revert(0, 0x24)
                }
                debited := sum
                sstore(slot, newDebt)
            }
        }

        // Checked after the effects: a mismatch reverts everything, and the happy path walks each array once.
        if (paid != total || debited != total) revert SumMismatch();
        emit BatchSettled(batchId, count, total);
        return true;
    }

    /// @notice Repays borrowerId's debt with the payer's EIP-3009 ReceiveWithAuthorization (to = this contract).
    /// @dev The authorization does not name the borrower, so its nonce must: the upper 16 bytes of nonce are the
    /// borrower's UUID (the lower 16 bytes of borrowerId). Otherwise anyone who saw a signed repayment could
    /// redeem it against a different borrower's debt.
    function repayWithAuthorization(
        bytes32 borrowerId, address from, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external {
        if (uint256(nonce) >> 128 != uint256(borrowerId)) revert NonceNotBoundToBorrower();
        uint256 debt = debtOf[borrowerId];
        if (value == 0 || value > debt) revert InvalidAmount();
        unchecked { debtOf[borrowerId] = debt - value; }
        asset.receiveWithAuthorization(from, address(this), value, validAfter, validBefore, nonce, v, r, s);
        emit Repaid(borrowerId, from, value);
    }

    /// @notice Refunds (part of) a settled payment: the pool takes `auth.value` back from `auth.from` (usually the
    /// merchant's payout address) with an EIP-3009 ReceiveWithAuthorization, and the borrower's debt shrinks by as much.
    /// @dev Permissionless, like repayWithAuthorization; what binds the signed authorization to one payment:
    /// - the nonce: its upper 16 bytes are the payment's UUID, so the signature can only be redeemed for that payment;
    /// - the proof: `entry` must be a leaf of the batch's stored root, so the borrower whose debt shrinks and the
    ///   amount that caps the refunds are the ones settled, not the caller's choice. `path` bit k set means the node
    ///   is the right child at proof step k; bits beyond the proof must be zero;
    /// - the cap: refunds of a payment add up to at most its settled amount. Debt is reduced by at most what is
    ///   still owed (a borrower who repaid first is not driven below zero); any excess stays in the pool;
    /// - the asset refuses a used nonce, so a signed refund is redeemed once.
    function refundWithAuthorization(
        bytes32 batchId, Entry calldata entry, bytes32[] calldata proof, uint256 path, RefundAuthorization calldata auth
    ) external {
        bytes32 paymentId = entry.paymentId;
        if (uint256(auth.nonce) >> 128 != uint256(paymentId)) revert NonceNotBoundToPayment();
        bytes32 root = batchRoot[batchId];
        if (root == 0 || path >> proof.length != 0 || _proofRoot(entry, proof, path) != root) revert NotInBatch();

        uint256 value = auth.value;
        if (value == 0) revert InvalidAmount();
        uint256 refunded = refundedOf[paymentId];
        // Written so that it never overflows, whatever value is.
        if (value > entry.amount || refunded > entry.amount - value) revert RefundExceedsPayment();
        refundedOf[paymentId] = refunded + value;

        bytes32 borrowerId = entry.borrowerId;
        uint256 debt = debtOf[borrowerId];
        uint256 debtReduced = value < debt ? value : debt;
        if (debtReduced != 0) {
            unchecked { debtOf[borrowerId] = debt - debtReduced; }
        }

        _receive(auth);
        emit Refunded(paymentId, borrowerId, entry.merchantId, auth.from, auth.nonce, value, debtReduced);
    }

    /// @dev A function of its own: the nine call arguments do not fit on the stack beside the caller's locals.
    function _receive(RefundAuthorization calldata a) private {
        asset.receiveWithAuthorization(a.from, address(this), a.value, a.validAfter, a.validBefore, a.nonce, a.v, a.r, a.s);
    }

    /// @dev The batch's Merkle root. Leaf i = keccak256 of entry i's 128 calldata bytes (= abi.encode of its four
    /// words); node i of the next level = keccak256(node 2i ‖ node 2i+1); an odd last node is promoted unchanged.
    /// Leaves hash 128 bytes and inner nodes 64, so an inner node cannot pass as a leaf. The tree is built in place in
    /// memory past the free memory pointer, which is not advanced. Callers ensure entries is not empty.
    function _entriesRoot(Entry[] calldata entries) private pure returns (bytes32 root) {
        assembly ("memory-safe") {
            let base := mload(0x40)
            let n := entries.length
            let p := entries.offset
            let q := base
            // Four entries per iteration, hashed up to level 2 (node j lands at base + 32j). The entries are copied
            // to q = base + 32j, past every node written so far; each leaf overwrites only words already hashed.
            for { let end := add(base, shl(5, shr(2, n))) } lt(q, end) {} {
                calldatacopy(q, p, 0x200)
                mstore(q, keccak256(q, 0x80))
                mstore(add(q, 0x20), keccak256(add(q, 0x80), 0x80))
                mstore(add(q, 0x40), keccak256(add(q, 0x100), 0x80))
                mstore(add(q, 0x60), keccak256(add(q, 0x180), 0x80))
                let right := keccak256(add(q, 0x40), 0x40)
                mstore(q, keccak256(q, 0x40))
                mstore(add(q, 0x20), right)
                mstore(q, keccak256(q, 0x40))
                p := add(p, 0x200)
                q := add(q, 0x20)
            }
            // The last one to three entries, the same way (a lone last node is promoted).
            let rest := and(n, 3)
            if rest {
                calldatacopy(q, p, shl(7, rest))
                for { let k := 0 } lt(k, rest) { k := add(k, 1) } {
                    mstore(add(q, shl(5, k)), keccak256(add(q, shl(7, k)), 0x80))
                }
                if gt(rest, 1) {
                    mstore(q, keccak256(q, 0x40))
                    if eq(rest, 3) {
                        mstore(add(q, 0x20), mload(add(q, 0x40)))
                        mstore(q, keccak256(q, 0x40))
                    }
                }
            }
            n := shr(2, add(n, 3))
            // The levels above, in place: node j = keccak256(node 2j, node 2j+1), two nodes per iteration.
            for {} gt(n, 1) {} {
                let src := base
                let dst := base
                for { let end := add(base, shl(6, shr(2, n))) } lt(dst, end) {} {
                    mstore(dst, keccak256(src, 0x40))
                    mstore(add(dst, 0x20), keccak256(add(src, 0x40), 0x40))
                    src := add(src, 0x80)
                    dst := add(dst, 0x40)
                }
                if and(n, 2) {
                    mstore(dst, keccak256(src, 0x40))
                    src := add(src, 0x40)
                    dst := add(dst, 0x20)
                }
                if and(n, 1) { mstore(dst, mload(src)) }
                n := shr(1, add(n, 1))
            }
            root := mload(base)
        }
    }

    /// @dev The root that `entry` and `proof` lead to (see _entriesRoot); bit k of path set: the node is a right child.
    function _proofRoot(Entry calldata entry, bytes32[] calldata proof, uint256 path) private pure returns (bytes32 node) {
        node = keccak256(abi.encode(entry.paymentId, entry.borrowerId, entry.merchantId, entry.amount));
        for (uint256 k; k < proof.length;) {
            bytes32 sibling = proof[k];
            assembly ("memory-safe") {
                let right := and(shr(k, path), 1)
                mstore(mul(right, 0x20), node)
                mstore(mul(iszero(right), 0x20), sibling)
                node := keccak256(0, 0x40)
            }
            unchecked { ++k; }
        }
    }
}
