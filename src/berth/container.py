"""Builds the services from settings: the composition shared by the HTTP app and the CLI."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from berth.capabilities.cart.orders import OrderService
from berth.capabilities.extras.extension import ExtraExtension
from berth.capabilities.gifts.payment import GiftPaymentExtension
from berth.capabilities.offers.details import OfferDetails
from berth.capabilities.offers.extension import OfferExtension
from berth.capabilities.packages.availability import PackageAvailability
from berth.capabilities.packages.details import PackageDetails
from berth.capabilities.packages.service import PackageBookings
from berth.capabilities.pickups.extension import PickupExtension
from berth.capabilities.questions.extension import QuestionExtension
from berth.capabilities.registry import CAPABILITIES, CATALOG_RULES
from berth.capabilities.rentals.details import RentalDetails
from berth.capabilities.rentals.policy import RentalPolicy
from berth.capabilities.resources.policy import ResourcePolicy
from berth.capabilities.resources.service import ResourceService
from berth.capabilities.webhooks.service import WebhookService
from berth.delivery.fanout import WebhookFanout
from berth.delivery.mail.gift_letter import GiftLetters
from berth.delivery.mail.outbox import GuestMail
from berth.delivery.mail.worker import MailWorker
from berth.delivery.worker import DeliveryWorker
from berth.domain.statements import Basis
from berth.domain.tickets import WalletPasses
from berth.services.allotments import AllotmentService
from berth.services.answers import AnswerCache
from berth.services.audit import AuditService
from berth.services.availability import AvailabilityService
from berth.services.bookings.capacity import CapacityPolicies
from berth.services.bookings.expiry import HoldExpiry
from berth.services.bookings.extensions import BookingExtensions
from berth.services.bookings.loader import BookingLoader
from berth.services.bookings.locks import slot_locks
from berth.services.bookings.reseller import ResellerBookings
from berth.services.bookings.steps import BookingSteps
from berth.services.bookings.supplier import SupplierBookings
from berth.services.catalog import CatalogService
from berth.services.checkin import CheckIn
from berth.services.clock import Clock, system_clock
from berth.services.connections import ConnectionService
from berth.services.contracts import ContractService
from berth.services.departures import DepartureService
from berth.services.gifts import GiftService
from berth.services.guessing import GuessingGuard
from berth.services.ledger import LedgerService
from berth.services.limits import RateLimiter, seconds_of
from berth.services.mappings import MappingService
from berth.services.offers import OffersService
from berth.services.payments import PaidConfirmations, Payments
from berth.services.payments.provider import CardProvider
from berth.services.payments.stripe_provider import StripeProvider
from berth.services.shop import ShopService
from berth.services.staff import StaffService
from berth.services.statements import StatementService
from berth.services.tickets import TicketService
from berth.settings import Settings
from berth.store.database import Database
from berth.tickets.documents import TicketDocuments
from berth.tickets.pkpass import PassSigner


@dataclass
class Services:
    settings: Settings
    database: Database
    clock: Clock
    catalog: CatalogService
    connections: ConnectionService
    contracts: ContractService
    allotments: AllotmentService
    availability: AvailabilityService
    bookings: ResellerBookings
    staff_bookings: SupplierBookings
    departures: DepartureService
    expiry: HoldExpiry
    orders: OrderService
    resources: ResourceService
    webhooks: WebhookService
    mappings: MappingService
    fanout: WebhookFanout
    delivery: DeliveryWorker
    rate_limiter: RateLimiter
    answers: AnswerCache
    staff: StaffService
    audit: AuditService
    guessing: GuessingGuard
    mail: GuestMail
    mailer: MailWorker
    checkin: CheckIn
    tickets: TicketDocuments
    statements: StatementService
    shop: ShopService
    payments: Payments
    ledger: LedgerService
    offers: OffersService
    gifts: GiftService
    # Requests stopped at their deadline that are still unwinding (rolling back) in the
    # background; closing waits for them before it closes the database.
    unwinding: set[asyncio.Task[None]] = field(default_factory=set)

    async def close(self) -> None:
        if self.unwinding:
            await asyncio.wait(set(self.unwinding), timeout=40)
        await self.delivery.close()
        self.mailer.close()
        await self.payments.close()
        await self.database.dispose()


def _card_provider(settings: Settings) -> CardProvider | None:
    """Stripe, when its key is set (its library loads with the first call to Stripe)."""
    if settings.stripe_secret_key is None:
        return None
    return StripeProvider(settings)


def build_services(settings: Settings, clock: Clock = system_clock) -> Services:
    database = Database(
        settings.database_url,
        ping_idle_seconds=settings.database_ping_idle_seconds,
        pool_size=settings.database_pool_size,
        max_overflow=settings.database_max_overflow,
    )
    box = settings.secret_box()
    passes = PassSigner.from_settings(settings)
    catalog = CatalogService(database, clock, (*CATALOG_RULES, *((WalletPasses(),) if passes else ())))
    # Capacity policies in registry order: an option is a rental, or has resources, or is plain.
    policies = CapacityPolicies((RentalPolicy(), ResourcePolicy(clock)))
    allotments = AllotmentService(database, clock, settings.auth_cache_seconds)
    answers = AnswerCache(database, clock, settings.answer_cache_seconds)
    availability = AvailabilityService(database, settings, clock, policies, allotments, answers)
    availability.add_extension(PackageAvailability(availability, clock))
    fanout = WebhookFanout(database, settings, clock, catalog, availability)
    catalog.observer = fanout
    allotments.observer = fanout
    locks = slot_locks(database, disabled=settings.debug_disable_slot_lock)
    # Booking extensions: what capabilities keep of a booking beside the core's fields.
    offers = OffersService(database, clock, catalog, answers)
    gifts = GiftService(database, settings, clock, catalog, box)
    extensions = BookingExtensions(
        (
            PickupExtension(),
            QuestionExtension(),
            ExtraExtension(),
            OfferExtension(offers, clock),
            GiftPaymentExtension(gifts),
        )
    )
    loader = BookingLoader(clock, policies, settings.tickets_url)
    # Capabilities' parts of a booking's details: the duration rented, a package's includes.
    loader.add_part(RentalDetails())
    loader.add_part(PackageDetails(loader))
    loader.add_part(OfferDetails(offers, clock))
    steps = BookingSteps(settings, clock, fanout, policies, locks, loader, allotments, extensions)
    bookings = ResellerBookings(database, clock, steps)
    orders = OrderService(database, clock, steps, bookings, fanout)
    steps.orders = orders
    mail = GuestMail(database, clock, catalog, loader)
    steps.notices = mail
    # A paying channel's bookings are confirmed only for a captured payment of their price.
    steps.add_confirmation_check(PaidConfirmations(clock))
    provider = _card_provider(settings)
    tickets = TicketDocuments(TicketService(database, catalog, loader), settings.ticket_paper, passes)
    # Groupings in the order they claim reservations: a package, else an order.
    packages = PackageBookings(database, clock, steps, bookings)
    bookings.add_grouping(packages)
    steps.add_companions(packages)
    bookings.add_grouping(orders)
    connections = ConnectionService(database, clock, box, settings.auth_cache_seconds)
    contracts = ContractService(database, clock, connections, catalog, allotments)
    contracts.observer = fanout
    shop = ShopService(
        database, settings, clock, catalog, connections, contracts, bookings, packages, answers
    )
    mail.links = shop
    gifts.notices = mail
    mail.gifts = GiftLetters(database, catalog, box, settings.ticket_paper)
    return Services(
        settings=settings,
        database=database,
        clock=clock,
        catalog=catalog,
        connections=connections,
        contracts=contracts,
        allotments=allotments,
        availability=availability,
        bookings=bookings,
        staff_bookings=SupplierBookings(database, clock, steps),
        departures=DepartureService(database, settings, clock, availability, steps, fanout),
        expiry=HoldExpiry(database, clock, catalog, steps),
        orders=orders,
        resources=ResourceService(database, clock),
        webhooks=WebhookService(database, settings, clock, box, [c.id for c in CAPABILITIES]),
        mappings=MappingService(database, settings, clock, fanout),
        fanout=fanout,
        delivery=DeliveryWorker(database, settings, clock, fanout, box=box),
        rate_limiter=RateLimiter(settings, database, seconds_of(clock)),
        answers=answers,
        statements=StatementService(database, Basis(settings.statement_basis), clock),
        staff=StaffService(database, clock),
        audit=AuditService(database),
        guessing=GuessingGuard(database, settings, clock),
        mail=mail,
        mailer=MailWorker(database, settings, clock, mail, catalog, tickets),
        checkin=CheckIn(database, clock, steps),
        tickets=tickets,
        shop=shop,
        payments=Payments(database, settings, clock, steps, catalog, provider),
        ledger=LedgerService(database, clock),
        offers=offers,
        gifts=gifts,
    )
