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

    IERC3009Asset public immutable asset;
    address public owner;
    mapping(address => bool) public isSettler;
    mapping(bytes32 => bool) public batchSettled;
    mapping(bytes32 => uint256) public debtOf;

    event PaymentSettled(bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, uint256 amount);
    event BatchSettled(bytes32 indexed batchId, uint256 paymentCount, uint256 total);
    event Repaid(bytes32 indexed borrowerId, address indexed from, uint256 amount);
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

    /// @return settledNow false when batchId was settled before: a retried submission is a no-op, never a second payment.
    function settleBatch(bytes32 batchId, Entry[] calldata entries, Payout[] calldata payouts, Debit[] calldata debits)
        external
        onlySettler
        returns (bool settledNow)
    {
        if (batchSettled[batchId]) return false;
        uint256 count = entries.length;
        if (count == 0) revert EmptyBatch();
        batchSettled[batchId] = true;

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

        uint256 debited;
        for (uint256 i; i < debits.length;) {
            Debit calldata d = debits[i];
            debited += d.amount;
            debtOf[d.borrowerId] += d.amount;
            unchecked { ++i; }
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
}
