# Production image: the ASGI server by default; run the worker with
#   docker run … celery -A config worker -Q celery,irt -l info
# Configure with DATABASE_URL (PostgreSQL), REDIS_URL and SECRET_KEY.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 DEBUG=0
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt
COPY . .
RUN python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--ws", "websockets", "--ws-per-message-deflate", "false"]
