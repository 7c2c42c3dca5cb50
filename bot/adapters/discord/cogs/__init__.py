"""studybot's Discord cogs, one per part of the bot; :data:`COGS` is what the client adds."""

from bot.adapters.discord.cogs.base import StudyCog
from bot.adapters.discord.cogs.questions import QuestionCog
from bot.adapters.discord.cogs.scores import ScoreCog
from bot.adapters.discord.cogs.setup import SetupCog
from bot.adapters.discord.cogs.snippets import SnippetCog

__all__ = ["COGS", "QuestionCog", "ScoreCog", "SetupCog", "SnippetCog", "StudyCog"]

COGS: tuple[type[StudyCog], ...] = (QuestionCog, SnippetCog, ScoreCog, SetupCog)
