"""A question that says nothing but a document's title asks about the document as a whole
(issue #45): among its segments, which every route scores within a hair of each other because
each carries the title, the earlier section goes first (``fusion.earlier_on_ties``)."""
from __future__ import annotations

import pytest

from hiqa.collection import Collection
from hiqa.settings import Settings

NOTE = "This command is in beta and might change without notice."


def page(command: str, synopsis: str, description: str, example: str, positional: str,
         flags: dict[str, str]) -> str:
    listed = "\n\n".join(f"- {flag}\n\n{text}" for flag, text in flags.items())
    return (f"# {command.replace(' ', '_')}(1)\n\n## SYNOPSIS\n\n{synopsis}\n\n"
            f"## DESCRIPTION\n\n{description}\n\n## EXAMPLES\n\n{example}\n\n"
            f"## POSITIONAL ARGUMENTS\n\n{positional}\n\n## FLAGS\n\n{listed}\n\n"
            f"## NOTES\n\n{NOTE}\n")


PAGES = {
    "gcloud_kms_keyrings_get-iam-policy.1.md": page(
        "gcloud kms keyrings get-iam-policy",
        "gcloud kms keyrings get-iam-policy KEYRING [--location=LOCATION] [--limit=LIMIT]",
        "(BETA) Gets the IAM policy for the given keyring.\n\n"
        "Returns an empty policy if the resource has none set.",
        "To get the IAM policy for a keyring named orchard in europe-west1, run:\n\n"
        "$ gcloud kms keyrings get-iam-policy orchard --location=europe-west1",
        "Keyring resource - The keyring to get the IAM policy for. The arguments in this group "
        "can be used to specify the attributes of this resource.\n\n- KEYRING\n\n"
        "ID of the keyring or fully qualified identifier for the keyring.",
        {"--location=LOCATION": "Location of the keyring.",
         "--limit=LIMIT": "Maximum number of bindings to list."}),
    "gcloud_kms_keyrings_set-iam-policy.1.md": page(
        "gcloud kms keyrings set-iam-policy",
        "gcloud kms keyrings set-iam-policy KEYRING POLICY_FILE [--location=LOCATION]",
        "Sets the IAM policy for a keyring from a JSON or YAML file.",
        "This command reads a policy from policy.json and sets it for the keyring orchard:\n\n"
        "$ gcloud kms keyrings set-iam-policy orchard policy.json --location=europe-west1",
        "- KEYRING\n\nName of the key ring whose IAM policy to set.\n\n- POLICY_FILE\n\n"
        "JSON or YAML file with the IAM policy.",
        {"--location=LOCATION": "Location of the keyring."}),
    "gcloud_kms_keys_get-iam-policy.1.md": page(
        "gcloud kms keys get-iam-policy",
        "gcloud kms keys get-iam-policy KEY [--keyring=KEYRING] [--location=LOCATION]",
        "Gets the IAM policy for a key.",
        "This command gets the IAM policy for the key apple in the keyring orchard:\n\n"
        "$ gcloud kms keys get-iam-policy apple --keyring=orchard --location=europe-west1",
        "- KEY\n\nName of the key whose IAM policy to fetch.",
        {"--keyring=KEYRING": "Key ring of the key.", "--location=LOCATION": "Location of the key."}),
    "gcloud_kms_keyrings_create.1.md": page(
        "gcloud kms keyrings create",
        "gcloud kms keyrings create KEYRING --location=LOCATION",
        "Creates a new keyring within the given location.",
        "This command creates a keyring named orchard in europe-west1:\n\n"
        "$ gcloud kms keyrings create orchard --location=europe-west1",
        "- KEYRING\n\nName of the key ring to create.",
        {"--location=LOCATION": "Location of the keyring."}),
    "gcloud_kms_keyrings_list.1.md": page(
        "gcloud kms keyrings list",
        "gcloud kms keyrings list --location=LOCATION [--limit=LIMIT]",
        "Lists the keyrings within a location.",
        "This command lists every keyring in europe-west1:\n\n"
        "$ gcloud kms keyrings list --location=europe-west1",
        "This command takes no positional arguments.",
        {"--location=LOCATION": "Location of the keyrings.",
         "--limit=LIMIT": "Maximum number of keyrings to list."}),
}
PAGE = "gcloud_kms_keyrings_get-iam-policy.1.md"


@pytest.fixture(scope="module")
def commands(tmp_path_factory):
    root = tmp_path_factory.mktemp("whole-title")
    folder = root / "commands"
    folder.mkdir()
    for file, text in PAGES.items():
        (folder / file).write_text(text, encoding="utf-8")
    col = Collection("commands", Settings(data_dir=root / "data"), create=True)
    col.ingest([folder])
    return col


def test_a_question_that_is_a_pages_title_finds_its_description_first(commands):
    # the argument section restates the title ("The keyring to get the IAM policy for") and
    # without the rule outranks the description by a hair; the description comes first
    result, hits = commands.search_result("get the IAM policy for a keyring", k=4)
    assert [h.segment.doc_id for h in hits[:3]] == [PAGE] * 3
    assert hits[0].segment.path[1:] == ("DESCRIPTION",)
    reading = result.candidates.reading
    assert reading is not None and reading.max() >= 0
    ahead = [h for h in hits[1:] if h.segment.path[1:] == ("POSITIONAL ARGUMENTS",)]
    assert ahead and ahead[0].score > hits[0].score  # a near tie, not a better score


def test_a_question_that_says_more_than_the_title_keeps_the_scores_order(commands):
    result, hits = commands.search_result("get the IAM policy for a keyring at a location", k=4)
    assert result.candidates.reading is None
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
